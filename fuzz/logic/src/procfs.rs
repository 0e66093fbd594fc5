//! The probes' `/proc` and `/sys` parsers on arbitrary bytes: every parser
//! answers with a value or a `Malformed` error (never an I/O error, never a
//! panic), what parses keeps its shape (a command line re-joins to the
//! input, a `stat` name is the text between the first `(` and the last
//! `)`, one meminfo/vmstat entry per non-blank line), and the packets built
//! from whatever parsed decode back with as many entries.

use protozero::{HeapWriter, TypedDecoder};
use zerotrace_probes::procfs::packets::{self, Selection, SysStatsSample, TreeOptions};
use zerotrace_probes::procfs::walk::{ProcessInfo, ProcessMemory};
use zerotrace_probes::procfs::{
    ProcError, buddyinfo, cmdline, cpufreq, cpuinfo, diskstats, meminfo, pid_stat, pid_status, psi,
    stat, thermal, vmstat,
};
use zerotrace_protos::protos::{ProcessStatsDecoder, ProcessTreeDecoder, SysStatsDecoder};

fn checked<T>(r: Result<T, ProcError>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(ProcError::Malformed { .. }) => None,
        Err(e) => panic!("a parser of bytes returned {e:?}"),
    }
}

/// Writes a packet with `f` and returns the payload of its field `field`.
fn payload(field: u32, f: impl FnOnce(&mut protozero::Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        f(&mut root);
    }
    let bytes = w.finish().expect("a heap writer does not fail");
    let d = TypedDecoder::<100>::new(&bytes);
    assert!(d.error().is_none(), "the packet decodes");
    d.get(field)
        .and_then(|f| f.as_bytes().ok())
        .expect("the payload field")
        .to_vec()
}

/// The `procfs` target.
pub fn procfs(data: &[u8]) {
    let text_lines = || {
        String::from_utf8_lossy(data)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count()
    };

    // cmdline: re-joining the arguments gives the input (one trailing NUL off).
    let args = cmdline::parse(data);
    if std::str::from_utf8(data).is_ok() {
        let body = data.strip_suffix(&[0]).unwrap_or(data);
        assert_eq!(args.join("\0").as_bytes(), body, "cmdline re-joins");
    }
    let _ = cmdline::parse_comm(data);

    if let Some(s) = checked(pid_stat::parse(data)) {
        let open = data
            .iter()
            .position(|&b| b == b'(')
            .expect("parsed: has '('");
        let close = data
            .iter()
            .rposition(|&b| b == b')')
            .expect("parsed: has ')'");
        assert_eq!(s.comm, String::from_utf8_lossy(&data[open + 1..close]));
    }
    let status = checked(pid_status::parse(data));
    let oom = checked(pid_status::parse_oom_score_adj(data));
    if let Some(m) = checked(meminfo::parse(data)) {
        assert_eq!(m.len(), text_lines(), "one meminfo entry per line");
    }
    if let Some(v) = checked(vmstat::parse(data)) {
        assert_eq!(v.len(), text_lines(), "one vmstat entry per line");
    }
    let st = checked(stat::parse(data));
    let pressure = checked(psi::parse(data));
    let disks = checked(diskstats::parse(data));
    let buddy = checked(buddyinfo::parse(data));
    let _ = checked(cpuinfo::parse(data));
    let _ = checked(cpufreq::parse_khz(data));
    let _ = checked(cpufreq::parse_available(data));
    let _ = checked(thermal::parse_temp(data));

    // The packets built from what parsed decode with as many entries.
    if let Some(status) = status {
        let proc = ProcessInfo {
            pid: status.pid,
            ppid: status.ppid,
            uid: status.uid,
            name: status.name.clone(),
            cmdline: args.clone(),
            kthread: status.kthread,
            start_ticks: None,
            threads: Vec::new(),
        };
        let bytes = payload(2, |p| {
            let options = TreeOptions {
                record_thread_names: true,
                record_process_age: true,
            };
            packets::write_process_tree(p, 0, std::slice::from_ref(&proc), options, None);
        });
        let tree = ProcessTreeDecoder::new(&bytes);
        let p = tree.processes().next().expect("one process");
        assert_eq!(p.cmdline().count(), args.len().max(1));
        let mem = ProcessMemory {
            pid: status.pid,
            status,
            oom_score_adj: oom,
            runtime_ticks: None,
            smaps_rollup: None,
            fds: Vec::new(),
        };
        let bytes = payload(9, |p| {
            packets::write_process_stats(p, 0, std::slice::from_ref(&mem), true, None);
        });
        let stats = ProcessStatsDecoder::new(&bytes);
        let p = stats.processes().next().expect("one process");
        assert_eq!(p.vm_rss_kb(), mem.status.vm_rss_kb);
        assert_eq!(p.oom_score_adj(), oom);
    }
    let sample = SysStatsSample {
        stat: st.clone(),
        psi: pressure.clone().map(|l| vec![(psi::Resource::Memory, l)]),
        diskstats: disks.clone(),
        buddyinfo: buddy.clone(),
        ..SysStatsSample::default()
    };
    let bytes = payload(7, |p| {
        packets::write_sys_stats(p, 0, &Selection::default(), &sample, None);
    });
    let s = SysStatsDecoder::new(&bytes);
    assert_eq!(
        s.cpu_stat().count(),
        st.as_ref().map_or(0, |s| s.cpus.len())
    );
    assert_eq!(
        s.num_softirq().count(),
        st.as_ref().map_or(0, |s| s.softirq.len())
    );
    assert_eq!(s.psi().count(), pressure.map_or(0, |p| p.len()));
    assert_eq!(s.disk_stat().count(), disks.map_or(0, |d| d.len()));
    assert_eq!(s.buddy_info().count(), buddy.map_or(0, |b| b.len()));
}
