//! `sys_stats` into counter tracks as upstream names them: meminfo in
//! bytes, vmstat and per-CPU times by key, disk I/O as differences between
//! readings, and unknown keys counted.

use crate::common;

use common::{packet, rows, s, trace};
use zerotrace_protos::protos::{MeminfoCounters, SysStats, VmstatCounters};
use zerotrace_trace_processor::{TraceProcessor, Value};

fn reading(ts: u64, free_kb: u64, read_sectors: u64, read_ms: u64) -> Vec<u8> {
    packet(move |p| {
        p.set_timestamp(ts);
        let mut st = SysStats::from_message(p.message().begin_nested(7));
        st.add_meminfo()
            .set_key(MeminfoCounters::MeminfoMemFree)
            .set_value(free_kb);
        // A key newer than any upstream names: counted, not shown.
        st.add_meminfo().set_key_raw(999).set_value(1);
        st.add_vmstat()
            .set_key(VmstatCounters::VmstatNrFreePages)
            .set_value(7);
        st.add_cpu_stat().set_cpu_id(1).set_user_ns(100 * ts);
        st.add_disk_stat()
            .set_device_name("vda")
            .set_read_sectors(read_sectors)
            .set_read_time_ms(read_ms);
        st.set_num_forks(ts);
    })
}

#[test]
fn sys_stats_counters_are_named_typed_and_counted() {
    let tp = TraceProcessor::from_bytes(&trace(&[
        reading(10, 1000, 0, 0),
        reading(20, 900, 4096, 500),
    ]))
    .expect("load");
    let q = |name: &str| {
        rows(
            &tp,
            &format!(
                "SELECT c.ts, c.value, t.type, t.unit FROM counter c \
                 JOIN counter_track t ON c.track_id = t.id WHERE t.name = '{name}' ORDER BY c.ts"
            ),
        )
    };
    assert_eq!(
        q("MemFree"),
        vec![
            vec![
                Value::Int(10),
                Value::Real(1_024_000.0),
                s("meminfo"),
                s("bytes")
            ],
            vec![
                Value::Int(20),
                Value::Real(921_600.0),
                s("meminfo"),
                s("bytes")
            ],
        ]
    );
    assert_eq!(q("nr_free_pages").len(), 2);
    assert_eq!(
        q("cpu.times.user_ns")[1],
        vec![
            Value::Int(20),
            Value::Real(2000.0),
            s("cpustat"),
            Value::Null
        ]
    );
    // Disk stats start at the second reading: 4096 sectors = 2 MiB in 0.5 s.
    assert_eq!(
        q("diskstat.[vda].read_amount"),
        vec![vec![
            Value::Int(20),
            Value::Real(2.0),
            s("diskstat"),
            s("MB")
        ]]
    );
    assert_eq!(
        q("diskstat.[vda].read_throughput"),
        vec![vec![
            Value::Int(20),
            Value::Real(4.0),
            s("diskstat"),
            s("MB/s")
        ]]
    );
    assert_eq!(q("num_forks").len(), 2);
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'meminfo_unknown_keys'"
        ),
        vec![vec![Value::Int(2)]]
    );
}
