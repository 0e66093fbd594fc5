//! The trace processor's v1 metric files, which `RUN_METRIC('dir/file.sql',
//! 'key', value, …)` runs (`run_metric.rs`): each a path as upstream names
//! it and the SQL text we wrote for it (`files/`), embedded in the binary.
//! A file creates views and tables a query reads next; `{{key}}`
//! placeholders in it are filled from the call's arguments. None holds
//! upstream's text: each computes the tables and columns upstream's file of
//! the same path documents, in our own SQL.

pub(crate) mod run_metric;

/// A metric file: its path and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MetricFile {
    /// Its path, as `RUN_METRIC` names it (`chrome/chrome_processes.sql`).
    pub path: &'static str,
    /// Its SQL text, with `{{key}}` placeholders.
    pub sql: &'static str,
}

/// Every metric file, sorted by path.
pub(crate) const METRIC_FILES: &[MetricFile] = &[
    MetricFile {
        path: "android/android_hwcomposer.sql",
        sql: include_str!("files/android/android_hwcomposer.sql"),
    },
    MetricFile {
        path: "android/android_jank_cuj.sql",
        sql: include_str!("files/android/android_jank_cuj.sql"),
    },
    MetricFile {
        path: "android/composer_execution.sql",
        sql: include_str!("files/android/composer_execution.sql"),
    },
    MetricFile {
        path: "android/composition_layers.sql",
        sql: include_str!("files/android/composition_layers.sql"),
    },
    MetricFile {
        path: "android/cpu_info.sql",
        sql: include_str!("files/android/cpu_info.sql"),
    },
    MetricFile {
        path: "android/jank/android_jank_cuj_init.sql",
        sql: include_str!("files/android/jank/android_jank_cuj_init.sql"),
    },
    MetricFile {
        path: "android/jank/internal/query_frame_slice.sql",
        sql: include_str!("files/android/jank/internal/query_frame_slice.sql"),
    },
    MetricFile {
        path: "android/jank/query_functions.sql",
        sql: include_str!("files/android/jank/query_functions.sql"),
    },
    MetricFile {
        path: "android/network_activity_template.sql",
        sql: include_str!("files/android/network_activity_template.sql"),
    },
    MetricFile {
        path: "android/power_profile_data.sql",
        sql: include_str!("files/android/power_profile_data.sql"),
    },
    MetricFile {
        path: "android/process_counter_span_view.sql",
        sql: include_str!("files/android/process_counter_span_view.sql"),
    },
    MetricFile {
        path: "android/process_metadata.sql",
        sql: include_str!("files/android/process_metadata.sql"),
    },
    MetricFile {
        path: "chrome/chrome_browser_main_thread_duration.sql",
        sql: include_str!("files/chrome/chrome_browser_main_thread_duration.sql"),
    },
    MetricFile {
        path: "chrome/chrome_processes.sql",
        sql: include_str!("files/chrome/chrome_processes.sql"),
    },
    MetricFile {
        path: "chrome/chrome_reliable_range.sql",
        sql: include_str!("files/chrome/chrome_reliable_range.sql"),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_files_are_sorted_and_unique() {
        for w in METRIC_FILES.windows(2) {
            assert!(w[0].path < w[1].path, "{} / {}", w[0].path, w[1].path);
        }
    }
}
