//! The procfs probes against this machine's live `/proc`: a spawned
//! process tree with known command lines and named threads must appear in
//! the scan and in the decoded `process_tree` packet with the right
//! parents, arguments and thread names; meminfo and this process's memory
//! counters must match what the test reads from `/proc` itself at the same
//! moment.

use crate::producer_common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

use protozero::{HeapWriter, TypedDecoder};
use zerotrace_probes::procfs::packets::{self, Selection, SysStatsSample, TreeOptions};
use zerotrace_probes::procfs::{ProcRoot, meminfo, walk};
use zerotrace_protos::protos::{
    MeminfoCounters, ProcessStatsDecoder, ProcessTreeDecoder, SysStatsDecoder,
};

const HELPER_ENV: &str = "ZEROTRACE_PROBES_TREE_HELPER";
const THREAD_NAMES: [&str; 2] = ["zt-probe-alpha", "zt probe (b)"];
const GRANDCHILD_ARG: &str = "3601";

/// Not a test by itself: the child of `live_process_tree`, run as this
/// test binary with the helper variable set. It starts two named threads
/// and a grandchild, says `ready`, and waits for its stdin to close.
#[test]
#[ignore = "run by live_process_tree as its child"]
fn tree_helper() {
    if std::env::var_os(HELPER_ENV).is_none() {
        return;
    }
    // std names a thread before running its closure, so a thread that
    // has said it started already has its name.
    let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let stop_rx = std::sync::Arc::new(std::sync::Mutex::new(stop_rx));
    let threads: Vec<_> = THREAD_NAMES
        .iter()
        .map(|name| {
            let (started, stop) = (started_tx.clone(), stop_rx.clone());
            std::thread::Builder::new()
                .name((*name).to_owned())
                .spawn(move || {
                    let _ = started.send(());
                    let _ = stop.lock().map(|r| r.recv());
                })
                .expect("spawn a named thread")
        })
        .collect();
    for _ in THREAD_NAMES {
        started_rx.recv().expect("a thread started");
    }
    let mut grandchild = Command::new("sleep")
        .arg(GRANDCHILD_ARG)
        .spawn()
        .expect("spawn sleep");
    println!("ready {}", grandchild.id());
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    let _ = grandchild.kill();
    let _ = grandchild.wait();
    drop(stop_tx);
    for t in threads {
        let _ = t.join();
    }
}

#[test]
fn live_process_tree() {
    let exe = std::env::current_exe().expect("own path");
    let helper = crate::test_name(module_path!(), "tree_helper");
    let args = [
        helper.as_str(),
        "--exact",
        "--ignored",
        "--nocapture",
        "--quiet",
    ];
    let mut child = Command::new(&exe)
        .args(args)
        .env(HELPER_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the helper");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let grandchild: i32 = loop {
        let line = lines.next().expect("helper output").expect("a line");
        if let Some(pid) = line.strip_prefix("ready ") {
            break pid.trim().parse().expect("grandchild pid");
        }
    };
    let child_pid = i32::try_from(child.id()).expect("pid");
    let child_stat = std::fs::read_to_string(format!("/proc/{child_pid}/stat")).expect("stat");
    let child_start: u64 = child_stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(19)?.parse().ok())
        .expect("starttime");
    let kernel_says_kthread = std::fs::read_to_string("/proc/self/status")
        .expect("status")
        .contains("\nKthread:");

    let (procs, _errors) = walk::scan_processes(&ProcRoot::system(), true).expect("scan /proc");
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        packets::write_process_tree(
            &mut root,
            1,
            &procs,
            TreeOptions {
                record_thread_names: true,
                record_process_age: true,
            },
            None,
        );
    }
    drop(child.stdin.take());
    let bytes = w.finish().expect("writes");
    let _ = child.wait();

    let payload = TypedDecoder::<100>::new(&bytes)
        .get(2)
        .and_then(|f| f.as_bytes().ok())
        .expect("process_tree")
        .to_vec();
    let tree = ProcessTreeDecoder::new(&payload);
    let me = i32::try_from(std::process::id()).expect("pid");
    let find = |pid: i32| tree.processes().find(|p| p.pid() == Some(pid));

    let c = find(child_pid).expect("the helper is in the tree");
    assert_eq!(c.ppid(), Some(me));
    let mut expected = vec![exe.to_string_lossy().into_owned()];
    expected.extend(args.iter().map(|s| (*s).to_owned()));
    assert_eq!(c.cmdline().collect::<Vec<_>>(), expected);
    assert_eq!(c.cmdline_is_comm(), None);
    assert_eq!(c.process_start_from_boot(), Some(child_start * 10_000_000));
    assert_eq!(c.is_kthread(), kernel_says_kthread.then_some(false));

    let g = find(grandchild).expect("the grandchild is in the tree");
    assert_eq!(g.ppid(), Some(child_pid));
    assert_eq!(g.cmdline().collect::<Vec<_>>(), ["sleep", GRANDCHILD_ARG]);

    let names: Vec<String> = tree
        .threads()
        .filter(|t| t.tgid() == Some(child_pid))
        .filter_map(|t| t.name().map(str::to_owned))
        .collect();
    for name in THREAD_NAMES {
        // The kernel keeps 15 bytes of a thread name.
        let kept = &name[..name.len().min(15)];
        assert!(names.iter().any(|n| n == kept), "{kept:?} not in {names:?}");
    }
    assert!(
        tree.threads()
            .filter(|t| t.tgid() == Some(child_pid))
            .all(|t| t.tid() != Some(child_pid)),
        "the main thread is the process, not a thread"
    );
    // Kernel threads (children of kthreadd, pid 2) carry their name.
    if let Some(k) = tree.processes().find(|p| p.ppid() == Some(2)) {
        assert_eq!(k.cmdline_is_comm(), Some(true));
        assert_eq!(k.cmdline().count(), 1);
        assert_eq!(k.is_kthread(), kernel_says_kthread.then_some(true));
    }
}

/// `/proc/meminfo` parsed the plain way (`key: value kB` per line), as the
/// oracle for the probes' parser.
fn meminfo_by_hand(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((
                k.trim().to_owned(),
                v.split_whitespace().next()?.parse().ok()?,
            ))
        })
        .collect()
}

#[test]
fn live_meminfo_matches_proc_meminfo() {
    let bytes = ProcRoot::system()
        .read("proc/meminfo", 1 << 20)
        .expect("read");
    let sample = SysStatsSample {
        meminfo: Some(meminfo::parse(&bytes).expect("parses")),
        ..SysStatsSample::default()
    };
    // One read of the live file serves both parsers, so the values must be
    // equal, not merely close (two reads a moment apart differ under load).
    let by_hand = meminfo_by_hand(&String::from_utf8_lossy(&bytes));
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        packets::write_sys_stats(&mut root, 1, &Selection::default(), &sample, None);
    }
    let bytes = w.finish().expect("writes");
    let payload = TypedDecoder::<100>::new(&bytes)
        .get(7)
        .and_then(|f| f.as_bytes().ok())
        .expect("sys_stats")
        .to_vec();
    let s = SysStatsDecoder::new(&payload);
    let got: Vec<(MeminfoCounters, u64)> = s
        .meminfo()
        .filter_map(|m| Some((m.key()?, m.value()?)))
        .collect();
    // The same keys, in the same order, as the file lines upstream names.
    let expected_keys: Vec<MeminfoCounters> = by_hand
        .iter()
        .filter_map(|(k, _)| meminfo::counter(k))
        .collect();
    assert_eq!(
        got.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        expected_keys
    );
    assert!(expected_keys.contains(&MeminfoCounters::MeminfoMemTotal));
    for (key, value) in &got {
        let (name, hand) = by_hand
            .iter()
            .find(|(k, _)| meminfo::counter(k) == Some(*key))
            .expect("present");
        assert_eq!(value, hand, "{name}");
    }
}

#[test]
fn live_process_stats_of_an_idle_child() {
    // An idle `sleep` whose memory does not move while it is read twice,
    // with an `oom_score_adj` of our choosing (raising it needs no
    // privilege).
    let mut child = Command::new("sleep")
        .arg("3602")
        .spawn()
        .expect("spawn sleep");
    let pid = i32::try_from(child.id()).expect("pid");
    std::fs::write(format!("/proc/{pid}/oom_score_adj"), "333").expect("set oom_score_adj");
    // Wait until it is asleep (its loader done): two equal reads in a row.
    let status_now = || std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let mut last = status_now();
    for _ in 0..200 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let now = status_now();
        if now == last && now.contains("State:\tS") {
            break;
        }
        last = now;
    }
    let mem = walk::read_memory(&ProcRoot::system(), pid)
        .expect("reads")
        .expect("alive");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let _ = child.kill();
    let _ = child.wait();
    let field = |key: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.split_whitespace().next()?.parse().ok())
    };
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        packets::write_process_stats(&mut root, 1, std::slice::from_ref(&mem), true, None);
    }
    let bytes = w.finish().expect("writes");
    let payload = TypedDecoder::<100>::new(&bytes)
        .get(9)
        .and_then(|f| f.as_bytes().ok())
        .expect("process_stats")
        .to_vec();
    let stats = ProcessStatsDecoder::new(&payload);
    let p = stats.processes().next().expect("one process");
    assert_eq!(p.pid(), Some(pid));
    assert_eq!(p.oom_score_adj(), Some(333));
    assert!(field("VmSize:").is_some_and(|v| v > 0));
    assert_eq!(p.vm_size_kb(), field("VmSize:"));
    assert_eq!(p.vm_rss_kb(), field("VmRSS:"));
    assert_eq!(p.rss_anon_kb(), field("RssAnon:"));
    assert_eq!(p.rss_file_kb(), field("RssFile:"));
    assert_eq!(p.rss_shmem_kb(), field("RssShmem:"));
    assert_eq!(p.vm_swap_kb(), field("VmSwap:"));
    assert_eq!(p.vm_locked_kb(), field("VmLck:"));
    assert_eq!(p.vm_hwm_kb(), field("VmHWM:"));
}

#[test]
fn a_process_that_exited_is_skipped() {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = i32::try_from(child.id()).expect("pid");
    child.wait().expect("reaped");
    let root = ProcRoot::system();
    assert_eq!(
        walk::read_process(&root, pid, true).expect("no error"),
        None
    );
    assert_eq!(walk::read_memory(&root, pid).expect("no error"), None);
    assert!(walk::tids(&root, pid).is_empty());
}

#[test]
fn scans_survive_processes_coming_and_going() {
    // Short-lived processes started and reaped while /proc is scanned:
    // those that vanish mid-read are skipped, never reported as errors.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut spawned = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(mut c) = Command::new("true").spawn() {
                    let _ = c.wait();
                    spawned += 1;
                }
            }
            spawned
        })
    };
    let root = ProcRoot::system();
    for _ in 0..20 {
        let (procs, errors) = walk::scan_processes(&root, true).expect("scan");
        assert!(errors.is_empty(), "{errors:?}");
        assert!(procs.iter().any(|p| p.pid == 1));
        let (_, errors) = walk::scan_memory(&root).expect("scan");
        assert!(errors.is_empty(), "{errors:?}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let spawned = churn.join().expect("churn thread");
    assert!(spawned > 0, "processes came and went during the scans");
}

/// `scan_smaps_rollup` and `resolve_process_fds` through the data source:
/// an idle child's PSS counters equal the kernel's own
/// `/proc/PID/smaps_rollup`, its descriptors equal what `/proc/PID/fd`
/// links to (a file it holds open on fd 7 among them), and a descriptor is
/// named once per session, not at every poll.
#[test]
fn smaps_rollup_and_fds_match_the_kernels_files() {
    use zerotrace_probes::producer::process_stats::ProcessStatsSource;
    use zerotrace_probes::producer::{BufferSink, DataSource, ProbeContext};
    use zerotrace_protos::protos::ProcessStatsConfig;
    use zerotrace_protos::upstream_tables::{data_source_field, packet_field};

    let mut child = Command::new("sh")
        .args(["-c", "exec 7</proc/version; exec sleep 3603"])
        .spawn()
        .expect("spawn sh");
    let pid = i32::try_from(child.id()).expect("pid");
    let links = || -> Vec<(u64, String)> {
        let mut v: Vec<(u64, String)> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|d| {
                d.filter_map(|e| {
                    let e = e.ok()?;
                    let fd = e.file_name().to_str()?.parse().ok()?;
                    let t = std::fs::read_link(e.path()).ok()?;
                    Some((fd, t.to_string_lossy().into_owned()))
                })
                .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    // Asleep in `sleep`, fd 7 open: its memory no longer moves.
    let rollup =
        || std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let mut last = rollup();
    for _ in 0..300 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let now = rollup();
        let asleep = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .is_ok_and(|s| s.contains("State:\tS") && s.contains("Name:\tsleep"));
        if now == last && asleep && links().iter().any(|(fd, _)| *fd == 7) {
            break;
        }
        last = now;
    }
    let cfg = producer_common::ds_config("linux.process_stats", |m| {
        ProcessStatsConfig::from_message(m.begin_nested(data_source_field::PROCESS_STATS_CONFIG))
            .set_proc_stats_poll_ms(100)
            .set_scan_smaps_rollup(true)
            .set_resolve_process_fds(true);
    });
    let ctx = ProbeContext::system();
    let mut probe = ProcessStatsSource.create(&cfg, &ctx).expect("accepted");
    let mut sink = BufferSink::default();
    let kernel_fds = links();
    probe.start(1, &mut sink);
    // PSS moves whenever another process maps or drops a page the child
    // shares (tests run side by side, spawning processes that share libc
    // with it), even between two equal reads of the kernel's file. So a
    // poll is compared with the kernel's file read just before and just
    // after it, and the test asks that some poll within 100 agree on every
    // counter exactly: a misparsed or misplaced counter never does.
    let stats_of = |packets: &[Vec<u8>]| -> Vec<Vec<u8>> {
        packets
            .iter()
            .filter_map(|p| {
                producer_common::payload(p, packet_field::PROCESS_STATS).map(|(_, b)| b)
            })
            .collect()
    };
    let counters = |rollup: &str| -> Vec<Option<u64>> {
        let field = |key: &str| -> Option<u64> {
            rollup
                .lines()
                .find_map(|l| l.strip_prefix(key)?.split_whitespace().next()?.parse().ok())
        };
        [
            "Rss:",
            "Pss:",
            "Pss_Anon:",
            "Pss_File:",
            "Pss_Shmem:",
            "SwapPss:",
        ]
        .into_iter()
        .map(field)
        .collect()
    };
    let mut last_mismatch = String::new();
    let mut agreed = false;
    for i in 1..=100u64 {
        let before = rollup();
        let from = sink.packets.len();
        probe.poll(i * 1_000_000_000, &mut sink);
        if rollup() != before {
            continue;
        }
        let kernel = counters(&before);
        assert!(kernel[1].is_some_and(|v| v > 0), "{before}");
        let polled = stats_of(sink.packets.get(from..).unwrap_or_default());
        let p = polled
            .iter()
            .find_map(|b| {
                ProcessStatsDecoder::new(b)
                    .processes()
                    .find(|p| p.pid() == Some(pid))
            })
            .expect("the child in the poll's process_stats");
        let probe_said = vec![
            p.smr_rss_kb(),
            p.smr_pss_kb(),
            p.smr_pss_anon_kb(),
            p.smr_pss_file_kb(),
            p.smr_pss_shmem_kb(),
            p.smr_swap_pss_kb(),
        ];
        if probe_said == kernel {
            agreed = true;
            break;
        }
        last_mismatch = format!("poll {i}: ours {probe_said:?}, the kernel's {kernel:?}");
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        agreed,
        "no poll agreed with the kernel's smaps_rollup; last: {last_mismatch}"
    );
    let ours = stats_of(&sink.packets);
    assert!(ours.len() >= 2, "a process_stats at start and at each poll");
    let mine = |i: usize| {
        ProcessStatsDecoder::new(&ours[i])
            .processes()
            .find(|p| p.pid() == Some(pid))
            .expect("the child")
    };
    // The descriptors, named at the first poll and never again.
    let fds: Vec<(u64, String)> = mine(0)
        .fds()
        .map(|f| {
            (
                f.fd().unwrap_or(u64::MAX),
                f.path().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(fds, kernel_fds);
    assert!(fds.contains(&(7, "/proc/version".to_owned())), "{fds:?}");
    for i in 1..ours.len() {
        assert_eq!(mine(i).fds().count(), 0, "poll {i}");
    }
}
