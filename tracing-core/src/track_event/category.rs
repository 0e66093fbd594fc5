//! TrackEvent categories and which of them a session turns on.
//!
//! A category is declared once (name, tags, description) and registered in
//! the `track_event` data source descriptor. A session's `TrackEventConfig`
//! decides its state with Perfetto's rule: the first of these that matches
//! wins — exact name in `enabled_categories`, exact tag in `enabled_tags`,
//! exact name in `disabled_categories`, exact tag in `disabled_tags` — then
//! the same four again as glob patterns. Unset `disabled_tags` means
//! `["slow", "debug"]`. A category nothing matches is enabled, as in
//! Perfetto's C++ SDK.

use std::sync::atomic::{AtomicU32, Ordering};

use zerotrace_protos::protos::TrackEventConfigDecoder;

/// A statically declared category (declare it as a `static`). Its state is
/// one bit per tracing session that enables it, so a disabled trace point
/// costs one relaxed load and a branch.
#[derive(Debug)]
pub struct Category {
    /// Its name, e.g. `"rendering"` or `"disabled-by-default-gpu"`.
    pub name: &'static str,
    /// Tags a config can select it by (e.g. `"slow"`, `"debug"`).
    pub tags: &'static [&'static str],
    /// What it traces, shown in the Perfetto UI's category list.
    pub description: &'static str,
    enabled: AtomicU32,
}

impl Category {
    /// A category with no tags or description.
    pub const fn new(name: &'static str) -> Category {
        Category::with(name, &[], "")
    }

    /// A category with tags and a description.
    pub const fn with(
        name: &'static str,
        tags: &'static [&'static str],
        description: &'static str,
    ) -> Category {
        Category {
            name,
            tags,
            description,
            enabled: AtomicU32::new(0),
        }
    }

    /// Whether any session has it on.
    #[inline(always)]
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed) != 0
    }

    /// The sessions (instance bits) that have it on.
    #[inline]
    pub fn enabled_mask(&self) -> u32 {
        self.enabled.load(Ordering::Relaxed)
    }

    pub(crate) fn set_instance(&self, bit: u32, on: bool) {
        if on {
            self.enabled.fetch_or(1 << bit, Ordering::Relaxed);
        } else {
            self.enabled.fetch_and(!(1 << bit), Ordering::Relaxed);
        }
    }
}

/// The category selection of one `TrackEventConfig`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryFilter {
    enabled_categories: Vec<String>,
    enabled_tags: Vec<String>,
    disabled_categories: Vec<String>,
    disabled_tags: Vec<String>,
}

/// Tags disabled when a config names none.
pub const DEFAULT_DISABLED_TAGS: [&str; 2] = ["slow", "debug"];

impl Default for CategoryFilter {
    /// No config: everything but the `slow` and `debug` tags.
    fn default() -> CategoryFilter {
        CategoryFilter {
            enabled_categories: Vec::new(),
            enabled_tags: Vec::new(),
            disabled_categories: Vec::new(),
            disabled_tags: DEFAULT_DISABLED_TAGS
                .iter()
                .map(|t| (*t).to_owned())
                .collect(),
        }
    }
}

impl CategoryFilter {
    /// The filter of an encoded `TrackEventConfig` (empty: the default).
    pub fn from_config(track_event_config: &[u8]) -> CategoryFilter {
        let d = TrackEventConfigDecoder::new(track_event_config);
        let list = |it: protozero::RepeatedStrs<'_>| it.map(str::to_owned).collect::<Vec<_>>();
        let disabled_tags = list(d.disabled_tags());
        CategoryFilter {
            enabled_categories: list(d.enabled_categories()),
            enabled_tags: list(d.enabled_tags()),
            disabled_categories: list(d.disabled_categories()),
            disabled_tags: if d.has_disabled_tags() {
                disabled_tags
            } else {
                DEFAULT_DISABLED_TAGS
                    .iter()
                    .map(|t| (*t).to_owned())
                    .collect()
            },
        }
    }

    /// Whether `category` is on under this filter.
    pub fn is_enabled(&self, category: &Category) -> bool {
        for exact in [true, false] {
            let matches = |pattern: &String, s: &str| {
                if exact {
                    pattern == s
                } else {
                    glob(pattern, s)
                }
            };
            if self
                .enabled_categories
                .iter()
                .any(|p| matches(p, category.name))
            {
                return true;
            }
            if self
                .enabled_tags
                .iter()
                .any(|p| category.tags.iter().any(|t| matches(p, t)))
            {
                return true;
            }
            if self
                .disabled_categories
                .iter()
                .any(|p| matches(p, category.name))
            {
                return false;
            }
            if self
                .disabled_tags
                .iter()
                .any(|p| category.tags.iter().any(|t| matches(p, t)))
            {
                return false;
            }
        }
        true
    }
}

/// Shell-style glob: `*` any run, `?` any one character.
pub fn glob(pattern: &str, s: &str) -> bool {
    let (p, s) = (pattern.as_bytes(), s.as_bytes());
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == b'?' || c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    static RENDERING: Category = Category::new("rendering");
    static GPU: Category = Category::with("gpu.memory", &["slow"], "");
    static DEBUG_ONLY: Category = Category::with("internals", &["debug"], "");

    fn filter(
        enabled: &[&str],
        enabled_tags: &[&str],
        disabled: &[&str],
        disabled_tags: Option<&[&str]>,
    ) -> CategoryFilter {
        let mut w = protozero::HeapWriter::new();
        {
            let mut m = w.root();
            for c in disabled {
                m.append_string(1, c);
            }
            for c in enabled {
                m.append_string(2, c);
            }
            for t in disabled_tags.unwrap_or(&[]) {
                m.append_string(3, t);
            }
            for t in enabled_tags {
                m.append_string(4, t);
            }
        }
        let mut f = CategoryFilter::from_config(&w.finish().unwrap());
        if disabled_tags == Some(&[]) {
            f.disabled_tags.clear();
        }
        f
    }

    #[test]
    fn globs() {
        assert!(glob("*", ""));
        assert!(glob("gpu.*", "gpu.memory"));
        assert!(glob("g?u*", "gpu"));
        assert!(!glob("gpu.*", "gpu"));
        assert!(glob("*mem*", "gpu.memory"));
        assert!(!glob("a*b", "acbc"));
    }

    #[test]
    fn perfettos_documented_rules() {
        // No config: on, except the slow and debug tags.
        let f = CategoryFilter::default();
        assert!(f.is_enabled(&RENDERING));
        assert!(!f.is_enabled(&GPU));
        assert!(!f.is_enabled(&DEBUG_ONLY));
        // `enabled_categories: "*"` turns on everything not tagged slow or debug.
        let f = filter(&["*"], &[], &[], None);
        assert!(f.is_enabled(&RENDERING));
        assert!(!f.is_enabled(&GPU), "an exact tag match beats a pattern");
        // `disabled_categories: "*"` plus a named category selects exactly it.
        let f = filter(&["rendering"], &[], &["*"], None);
        assert!(f.is_enabled(&RENDERING));
        assert!(!f.is_enabled(&Category::new("audio")));
        // An exact enabled name beats the default disabled tag.
        let f = filter(&["gpu.memory"], &[], &[], None);
        assert!(f.is_enabled(&GPU));
        // Tags select too, and exact beats glob.
        let f = filter(&[], &["slow"], &["gpu.*"], None);
        assert!(
            f.is_enabled(&GPU),
            "exact enabled tag before glob disabled name"
        );
        let f = filter(&[], &[], &["gpu.*"], Some(&[]));
        assert!(!f.is_enabled(&GPU));
        assert!(
            f.is_enabled(&DEBUG_ONLY),
            "nothing matches: enabled, as in the C++ SDK"
        );
    }
}
