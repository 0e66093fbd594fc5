use protozero::HeapWriter;
use zerotrace_protos::protos::HeapprofdConfig;

use super::*;

fn config(f: impl FnOnce(&mut HeapprofdConfig<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = HeapprofdConfig::from_message(w.root());
        f(&mut c);
    }
    w.finish().unwrap()
}

/// The top-level fields of `HeapprofdConfig` in our schema file.
fn schema_fields() -> Vec<(u32, String)> {
    let text =
        include_str!("../../../protos/proto/perfetto/config/profiling/heapprofd_config.proto");
    let mut out = Vec::new();
    for line in text.lines() {
        // Top-level fields are indented by two spaces exactly.
        let Some(rest) = line.strip_prefix("  ") else {
            continue;
        };
        if rest.starts_with(' ') {
            continue;
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        if let ["optional" | "repeated", _ty, name, "=", num] = words[..] {
            out.push((num.trim_end_matches(';').parse().unwrap(), name.to_owned()));
        }
    }
    out
}

#[test]
fn every_schema_field_is_decided_and_no_other() {
    let schema = schema_fields();
    assert_eq!(schema.len(), 25, "schema read: {schema:?}");
    for (n, name) in &schema {
        assert!(
            HEAPPROFD_CONFIG_FIELDS
                .iter()
                .any(|(m, f, _)| m == n && f == name),
            "{name} = {n} has no decision"
        );
    }
    for (n, name, _) in HEAPPROFD_CONFIG_FIELDS {
        assert!(
            schema.iter().any(|(m, f)| m == n && f == name),
            "{name} = {n} is not in the schema"
        );
    }
}

#[test]
fn no_heaps_named_takes_libc_malloc_and_the_allocators_own_heap() {
    let c = HeapConfig::parse(&config(|c| {
        c.set_sampling_interval_bytes(4096);
    }))
    .unwrap();
    assert_eq!(c.heaps.interval(LIBC_MALLOC_HEAP, false), Some(4096));
    assert_eq!(c.heaps.interval("rust.global_alloc", true), Some(4096));
    assert_eq!(c.heaps.interval("other", false), None);
    assert!(c.refused.is_empty(), "{:?}", c.refused);
}

#[test]
fn named_heaps_take_their_own_intervals_and_exclusions_win() {
    let c = HeapConfig::parse(&config(|c| {
        c.set_sampling_interval_bytes(4096)
            .add_heaps("a")
            .add_heaps("b")
            .add_heap_sampling_intervals(1)
            .add_heap_sampling_intervals(64)
            .add_exclude_heaps("b");
    }))
    .unwrap();
    assert_eq!(c.heaps.interval("a", false), Some(1));
    assert_eq!(c.heaps.interval("b", false), None, "excluded");
    // Heaps were named: the allocator's own heap is not taken by default.
    assert_eq!(c.heaps.interval("rust.global_alloc", true), None);
    assert_eq!(c.heaps.interval(LIBC_MALLOC_HEAP, false), None);

    let all = HeapConfig::parse(&config(|c| {
        c.set_sampling_interval_bytes(8)
            .set_all_heaps(true)
            .add_exclude_heaps("x");
    }))
    .unwrap();
    assert_eq!(all.heaps.interval("anything", false), Some(8));
    assert_eq!(all.heaps.interval("x", false), None);
}

#[test]
fn configs_upstream_rejects_are_errors() {
    assert_eq!(
        HeapConfig::parse(&config(|_| {})),
        Err(HeapConfigError::ZeroInterval)
    );
    assert_eq!(
        HeapConfig::parse(&config(|c| {
            c.set_sampling_interval_bytes(1)
                .add_heaps("a")
                .add_heaps("b")
                .add_heap_sampling_intervals(4);
        })),
        Err(HeapConfigError::IntervalsMismatch {
            heaps: 2,
            intervals: 1
        })
    );
    assert_eq!(
        HeapConfig::parse(&config(|c| {
            c.set_sampling_interval_bytes(1)
                .set_no_startup(true)
                .set_no_running(true);
        })),
        Err(HeapConfigError::NoProcess)
    );
    assert!(matches!(
        HeapConfig::parse(&[0x0a, 0x05, 0x01]),
        Err(HeapConfigError::Malformed(_))
    ));
}

#[test]
fn no_startup_is_refused_by_name_and_no_running_is_read() {
    let c = HeapConfig::parse(&config(|c| {
        c.set_sampling_interval_bytes(4096).set_no_startup(true);
    }))
    .unwrap();
    assert!(
        c.refused
            .iter()
            .any(|l| l.starts_with("HeapprofdConfig.no_startup:")),
        "{:?}",
        c.refused
    );
    let c = HeapConfig::parse(&config(|c| {
        c.set_sampling_interval_bytes(4096).set_no_running(true);
    }))
    .unwrap();
    assert!(c.no_running && c.refused.is_empty(), "{:?}", c.refused);
}

#[test]
fn refused_and_unknown_fields_are_lines_for_the_person_who_asked() {
    let mut bytes = config(|c| {
        c.set_sampling_interval_bytes(4096)
            .set_stream_allocations(true)
            .set_disable_fork_teardown(false);
    });
    // A field number from a newer schema.
    bytes.extend_from_slice(&[0xf8, 0x03, 0x01]); // field 63, varint 1
    let c = HeapConfig::parse(&bytes).unwrap();
    assert_eq!(
        c.refused,
        [
            "HeapprofdConfig.stream_allocations: not supported by this profiler, recorded without it",
            "HeapprofdConfig field 63: unknown to this profiler, recorded without it",
        ],
        "a refused field at its default asks nothing"
    );
}

#[test]
fn targets_by_pid_by_normalised_cmdline_or_all() {
    let c = HeapConfig::parse(&config(|c| {
        c.set_sampling_interval_bytes(1)
            .add_process_cmdline("/system/bin/surfaceflinger@1.0")
            .add_pid(42);
    }))
    .unwrap();
    assert_eq!(c.cmdlines, ["surfaceflinger"]);
    assert!(c.targets(42, "whatever"));
    assert!(c.targets(7, "/usr/bin/surfaceflinger\0--flag\0"));
    assert!(!c.targets(7, "surfaceflingers"));
    let all = HeapConfig::parse(&config(|c| {
        c.set_sampling_interval_bytes(1).set_all(true);
    }))
    .unwrap();
    assert!(all.targets(1, ""));
    assert_eq!(normalize_cmdline("a/b@c@d"), "b");
    assert_eq!(normalize_cmdline(""), "");
}

#[test]
fn the_queue_size_follows_shmem_size_bytes_within_upstreams_bounds() {
    let size = |s: u64| {
        HeapConfig::parse(&config(|c| {
            c.set_sampling_interval_bytes(1).set_shmem_size_bytes(s);
        }))
        .unwrap()
    };
    assert_eq!(size(0).queue_bytes, DEFAULT_SHMEM_SIZE);
    assert!(size(0).refused.is_empty());
    assert_eq!(size(1 << 16).queue_bytes, 1 << 16);
    assert!(size(1 << 16).refused.is_empty());
    assert_eq!(size(1 << 30).queue_bytes, MAX_SHMEM_SIZE);
    let odd = size(10_000);
    assert_eq!(odd.queue_bytes, 8192, "rounded down to a power of two");
    assert_eq!(odd.refused.len(), 1, "{:?}", odd.refused);
}

/// Every size at and around the cap, powers of two or not, tiny or 0:
/// what the config yields is a power of two within the bounds (upstream's
/// 500 MiB cap, which is none, gave a ring the client refused at its
/// first sample), and only a size asked for exactly passes silently.
#[test]
fn shmem_size_bytes_always_yields_a_power_of_two_at_most_256_mib() {
    const MIB: u64 = 1 << 20;
    assert_eq!(MAX_SHMEM_SIZE, 256 * MIB);
    let cases: &[(u64, u64, bool)] = &[
        // (asked, ring, silently)
        (0, DEFAULT_SHMEM_SIZE, true),
        (1, DEFAULT_SHMEM_SIZE, false),
        (4096, DEFAULT_SHMEM_SIZE, false),
        (8191, DEFAULT_SHMEM_SIZE, false),
        (8192, 8192, true),
        (8193, 8192, false),
        (3 * MIB, 2 * MIB, false),
        (255 * MIB, 128 * MIB, false),
        (256 * MIB, 256 * MIB, true),
        (256 * MIB + 1, 256 * MIB, false),
        (500 * MIB, 256 * MIB, false),
        (511 * MIB, 256 * MIB, false),
        (512 * MIB, 256 * MIB, false),
        (513 * MIB, 256 * MIB, false),
        (1024 * MIB, 256 * MIB, false),
        (u64::MAX, 256 * MIB, false),
    ];
    for &(asked, ring, silently) in cases {
        let c = HeapConfig::parse(&config(|c| {
            c.set_sampling_interval_bytes(1).set_shmem_size_bytes(asked);
        }))
        .unwrap();
        assert_eq!(c.queue_bytes, ring, "asked {asked}");
        assert!(c.queue_bytes.is_power_of_two(), "asked {asked}");
        assert_eq!(
            c.refused.is_empty(),
            silently,
            "asked {asked}: {:?}",
            c.refused
        );
        assert_eq!(queue_size(asked).0, ring);
        // The preloaded client's writer takes it, over the helper's mapping.
        #[cfg(target_os = "linux")]
        assert!(
            crate::shared_ring::usable_ring(c.queue_bytes, MAX_SHMEM_SIZE as usize),
            "asked {asked}: a ring of {} the client refuses",
            c.queue_bytes
        );
    }
}

#[test]
fn continuous_dumps_need_an_interval() {
    let c = HeapConfig::parse(&config(|c| {
        c.set_sampling_interval_bytes(1)
            .begin_continuous_dump_config()
            .set_dump_phase_ms(10)
            .set_dump_interval_ms(100);
    }))
    .unwrap();
    assert_eq!(c.continuous_dump, Some((10, 100)));
    let none = HeapConfig::parse(&config(|c| {
        c.set_sampling_interval_bytes(1)
            .begin_continuous_dump_config()
            .set_dump_phase_ms(10);
    }))
    .unwrap();
    assert_eq!(none.continuous_dump, None);
}
