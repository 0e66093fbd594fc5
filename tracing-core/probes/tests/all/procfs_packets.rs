//! The packets the procfs probes write, decoded again with the decoders
//! generated from upstream's schema: built from the fixture tree, every
//! field checked against the fixture files, and the TracePacket field
//! numbers checked against upstream's (2, 9, 7, 67).

use crate::support::fixtures;
use protozero::{HeapWriter, TypedDecoder};
use zerotrace_probes::procfs::packets::{self, Selection, TreeOptions};
use zerotrace_probes::procfs::sample::{self, Due};
use zerotrace_probes::procfs::walk;
use zerotrace_protos::protos::sys_stats::psi_sample::PsiResource;
use zerotrace_protos::protos::sys_stats_config::StatCounters;
use zerotrace_protos::protos::{
    CpuInfoDecoder, MeminfoCounters, ProcessStatsDecoder, ProcessTreeDecoder, SysStatsConfig,
    SysStatsConfigDecoder, SysStatsDecoder, VmstatCounters,
};

/// Writes one TracePacket with `f`, returns (timestamp, the payload of
/// field `field`), failing if the packet holds anything else.
fn packet(field: u32, f: impl FnOnce(&mut protozero::Message<'_>)) -> (u64, Vec<u8>) {
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        f(&mut root);
    }
    let bytes = w.finish().expect("writes");
    let d = TypedDecoder::<100>::new(&bytes);
    assert!(d.error().is_none());
    let ids: Vec<u32> = d.fields().map(|f| f.id).collect();
    assert_eq!(ids, [8, field], "timestamp then the payload only");
    let ts = d.get(8).and_then(|f| f.as_u64().ok()).expect("timestamp");
    let payload = d
        .get(field)
        .and_then(|f| f.as_bytes().ok())
        .expect("payload");
    (ts, payload.to_vec())
}

#[test]
fn process_tree_from_the_fixture_tree() {
    let (procs, errors) = walk::scan_processes(&fixtures(), true).expect("scans");
    assert!(errors.is_empty());
    let (ts, bytes) = packet(2, |p| {
        packets::write_process_tree(
            p,
            77,
            &procs,
            TreeOptions {
                record_thread_names: true,
                record_process_age: true,
            },
            Some(78),
        )
    });
    assert_eq!(ts, 77);
    let tree = ProcessTreeDecoder::new(&bytes);
    assert_eq!(tree.collection_end_timestamp(), Some(78));
    let ps: Vec<_> = tree.processes().collect();
    assert_eq!(ps.len(), 3);
    let init = &ps[0];
    assert_eq!(
        (init.pid(), init.ppid(), init.uid()),
        (Some(1), Some(0), Some(0))
    );
    assert_eq!(init.cmdline().collect::<Vec<_>>(), ["/sbin/init", "splash"]);
    assert_eq!(init.cmdline_is_comm(), None);
    assert_eq!(init.is_kthread(), Some(false));
    // starttime 9 ticks of 10 ms.
    assert_eq!(init.process_start_from_boot(), Some(90_000_000));
    let kthread = &ps[1];
    assert_eq!(kthread.cmdline().collect::<Vec<_>>(), ["kthreadd"]);
    assert_eq!(kthread.cmdline_is_comm(), Some(true));
    assert_eq!(kthread.is_kthread(), Some(true));
    let app = &ps[2];
    assert_eq!(
        (app.pid(), app.ppid(), app.uid()),
        (Some(42), Some(1), Some(1000))
    );
    assert_eq!(
        app.cmdline().collect::<Vec<_>>(),
        ["my app", "--flag=x y", "", "last"]
    );
    let threads: Vec<_> = tree
        .threads()
        .map(|t| (t.tid(), t.tgid(), t.name().map(str::to_owned)))
        .collect();
    assert_eq!(
        threads,
        [
            (Some(43), Some(42), Some("worker one".to_owned())),
            (Some(44), Some(42), Some("io".to_owned()))
        ]
    );
    // Without record_thread_names the threads are there, unnamed.
    let (_, bytes) = packet(2, |p| {
        packets::write_process_tree(p, 1, &procs, TreeOptions::default(), None)
    });
    let tree = ProcessTreeDecoder::new(&bytes);
    assert_eq!(tree.threads().count(), 2);
    assert!(tree.threads().all(|t| !t.has_name()));
    assert!(tree.processes().all(|p| !p.has_process_start_from_boot()));
    assert!(!tree.has_collection_end_timestamp());
}

#[test]
fn process_stats_from_the_fixture_tree() {
    let (mem, _) = walk::scan_memory(&fixtures()).expect("scans");
    let (_, bytes) = packet(9, |p| packets::write_process_stats(p, 5, &mem, true, None));
    let stats = ProcessStatsDecoder::new(&bytes);
    let ps: Vec<_> = stats.processes().collect();
    assert_eq!(ps.len(), 2);
    let init = &ps[0];
    assert_eq!(init.pid(), Some(1));
    assert_eq!(init.vm_size_kb(), Some(167_000));
    assert_eq!(init.vm_rss_kb(), Some(12_000));
    assert_eq!(init.rss_anon_kb(), Some(4000));
    assert_eq!(init.rss_file_kb(), Some(7900));
    assert_eq!(init.rss_shmem_kb(), Some(100));
    assert_eq!(init.vm_swap_kb(), Some(16));
    assert_eq!(init.vm_locked_kb(), Some(0));
    assert_eq!(init.vm_hwm_kb(), Some(13_000));
    assert_eq!(init.oom_score_adj(), Some(-900));
    assert_eq!((ps[1].pid(), ps[1].oom_score_adj()), (Some(42), Some(200)));
    // utime 55 and stime 66 ticks of 10 ms.
    assert_eq!(init.runtime_user_mode(), Some(550_000_000));
    assert_eq!(init.runtime_kernel_mode(), Some(660_000_000));
    let (_, bytes) = packet(9, |p| packets::write_process_stats(p, 5, &mem, false, None));
    let stats = ProcessStatsDecoder::new(&bytes);
    assert!(
        stats
            .processes()
            .all(|p| !p.has_runtime_user_mode() && !p.has_runtime_kernel_mode())
    );
}

fn config(f: impl FnOnce(&mut SysStatsConfig<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = SysStatsConfig::from_message(w.root());
        f(&mut c);
    }
    w.finish().expect("writes")
}

#[test]
fn sys_stats_everything_from_the_fixture_tree() {
    let (sample, errors) = sample::read_sample(&fixtures(), Due::ALL);
    assert!(errors.is_empty(), "{errors:?}");
    let cfg = config(|_| {});
    let selection = Selection::from_config(&SysStatsConfigDecoder::new(&cfg));
    assert_eq!(selection, Selection::default(), "no lists: everything");
    let (ts, bytes) = packet(7, |p| {
        packets::write_sys_stats(p, 9, &selection, &sample, Some(10))
    });
    assert_eq!(ts, 9);
    let s = SysStatsDecoder::new(&bytes);
    assert_eq!(s.collection_end_timestamp(), Some(10));

    // meminfo: every fixture line upstream names, value in kB as printed.
    let text = std::fs::read_to_string(fixtures().path("proc/meminfo")).expect("fixture");
    let expected: Vec<(i32, u64)> = text
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let c = zerotrace_probes::procfs::meminfo::counter(k.trim())?;
            Some((c as i32, v.split_whitespace().next()?.parse().ok()?))
        })
        .collect();
    let got: Vec<(i32, u64)> = s
        .meminfo()
        .map(|m| (m.key_raw().expect("key"), m.value().expect("value")))
        .collect();
    assert!(expected.len() > 20);
    assert_eq!(got, expected);

    // vmstat: the fixture's keys upstream names, in file order, not the others.
    let text = std::fs::read_to_string(fixtures().path("proc/vmstat")).expect("fixture");
    let expected: Vec<(i32, u64)> = text
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((
                zerotrace_probes::procfs::vmstat::counter(k)?,
                v.parse().ok()?,
            ))
        })
        .collect();
    let got: Vec<_> = s
        .vmstat()
        .map(|v| (v.key_raw().expect("key"), v.value().expect("value")))
        .collect();
    assert!(expected.len() > 20 && expected.len() < text.lines().count());
    assert_eq!(got, expected);
    assert_eq!(
        s.vmstat().next().and_then(|v| v.key()),
        Some(VmstatCounters::VmstatNrFreePages)
    );

    // stat: per-CPU times in ns (ticks × 10 ms), irqs, softirqs, forks.
    let cpus: Vec<_> = s.cpu_stat().collect();
    assert_eq!(cpus.len(), 2);
    assert_eq!(cpus[1].cpu_id(), Some(1));
    assert_eq!(cpus[1].user_ns(), Some(200 * 10_000_000));
    assert_eq!(cpus[1].user_nice_ns(), Some(10 * 10_000_000));
    assert_eq!(cpus[1].system_mode_ns(), Some(50 * 10_000_000));
    assert_eq!(cpus[1].idle_ns(), Some(2500 * 10_000_000));
    assert_eq!(cpus[1].io_wait_ns(), Some(3 * 10_000_000));
    assert_eq!(cpus[1].irq_ns(), Some(0));
    assert_eq!(cpus[1].softirq_ns(), Some(2 * 10_000_000));
    assert_eq!(cpus[1].steal_ns(), Some(5 * 10_000_000));
    assert_eq!(s.num_irq_total(), Some(1000));
    let irqs: Vec<_> = s.num_irq().map(|i| (i.irq(), i.count())).collect();
    assert_eq!(
        irqs,
        [(Some(1), Some(5)), (Some(3), Some(995))],
        "non-zero irqs only"
    );
    assert_eq!(s.num_softirq_total(), Some(600));
    assert_eq!(s.num_softirq().count(), 4, "every softirq, zeros too");
    assert_eq!(s.num_forks(), Some(4242));

    // cpufreq, psi (µs → ns), thermal (m°C → °C; a negative one has no temp), disks.
    assert_eq!(s.cpufreq_khz().collect::<Vec<_>>(), [1_800_000, 600_000]);
    let psi: Vec<_> = s.psi().map(|p| (p.resource(), p.total_ns())).collect();
    assert_eq!(psi.len(), 6);
    assert_eq!(psi[0], (Some(PsiResource::CpuSome), Some(123_456_000)));
    assert_eq!(psi[3], (Some(PsiResource::IoFull), Some(555_000)));
    assert_eq!(psi[5], (Some(PsiResource::MemoryFull), Some(8000)));
    let zones: Vec<_> = s
        .thermal_zone()
        .map(|z| {
            (
                z.name().map(str::to_owned),
                z.temp(),
                z.r#type().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        zones,
        [
            (
                Some("thermal_zone0".into()),
                Some(45),
                Some("x86_pkg_temp".into())
            ),
            (Some("thermal_zone1".into()), None, Some("acpitz".into()))
        ]
    );
    let disks: Vec<_> = s.disk_stat().collect();
    assert_eq!(disks.len(), 3);
    assert_eq!(disks[1].device_name(), Some("vda"));
    assert_eq!(disks[1].read_sectors(), Some(80_000));
    assert_eq!(disks[1].write_time_ms(), Some(900));
    assert_eq!(disks[1].flush_count(), Some(40));
    assert_eq!(disks[2].discard_sectors(), None);

    // devfreq, buddyinfo, cpuidle.
    let devfreq: Vec<_> = s
        .devfreq()
        .map(|d| (d.key().map(str::to_owned), d.value()))
        .collect();
    assert_eq!(devfreq, [(Some("gpu0".to_owned()), Some(585_000_000))]);
    let buddy: Vec<_> = s.buddy_info().collect();
    assert_eq!(buddy.len(), 3);
    assert_eq!(
        (buddy[2].node(), buddy[2].zone()),
        (Some("0"), Some("Normal"))
    );
    assert_eq!(buddy[2].order_pages().count(), 11);
    assert_eq!(buddy[2].order_pages().last(), Some(3291));
    let idle: Vec<_> = s.cpuidle_state().collect();
    assert_eq!(idle.len(), 1);
    assert_eq!(idle[0].cpu_id(), Some(0));
    let entries: Vec<_> = idle[0]
        .cpuidle_state_entry()
        .map(|e| (e.state().map(str::to_owned), e.duration_us()))
        .collect();
    assert_eq!(
        entries,
        [
            (Some("POLL".to_owned()), Some(1500)),
            (Some("C1".to_owned()), Some(987_654)),
            (Some("C10".to_owned()), Some(42))
        ]
    );
}

#[test]
fn sys_stats_writes_only_the_selected_counters() {
    let (sample, _) = sample::read_sample(&fixtures(), Due::ALL);
    let cfg = config(|c| {
        c.add_meminfo_counters(MeminfoCounters::MeminfoMemFree)
            .add_meminfo_counters(MeminfoCounters::MeminfoMemTotal)
            .add_vmstat_counters(VmstatCounters::VmstatPgfault)
            .add_stat_counters(StatCounters::StatForkCount);
    });
    let selection = Selection::from_config(&SysStatsConfigDecoder::new(&cfg));
    let (_, bytes) = packet(7, |p| {
        packets::write_sys_stats(p, 1, &selection, &sample, None)
    });
    let s = SysStatsDecoder::new(&bytes);
    let keys: Vec<_> = s.meminfo().filter_map(|m| m.key()).collect();
    assert_eq!(
        keys,
        [
            MeminfoCounters::MeminfoMemTotal,
            MeminfoCounters::MeminfoMemFree
        ],
        "file order, selected only"
    );
    let vm: Vec<_> = s.vmstat().filter_map(|v| v.key()).collect();
    assert!(vm.iter().all(|&k| k == VmstatCounters::VmstatPgfault));
    assert_eq!(s.cpu_stat().count(), 0);
    assert!(!s.has_num_irq_total() && !s.has_num_softirq_total());
    assert_eq!(s.num_forks(), Some(4242));
}

#[test]
fn a_poll_writes_only_what_is_due() {
    let due = Due {
        meminfo: true,
        ..Due::default()
    };
    let (sample, _) = sample::read_sample(&fixtures(), due);
    let (_, bytes) = packet(7, |p| {
        packets::write_sys_stats(p, 1, &Selection::default(), &sample, None)
    });
    let s = SysStatsDecoder::new(&bytes);
    assert!(s.meminfo().count() > 0);
    assert_eq!(
        s.vmstat().count() + s.cpu_stat().count() + s.psi().count(),
        0
    );
    assert_eq!(
        s.cpufreq_khz().count() + s.thermal_zone().count() + s.disk_stat().count(),
        0
    );
}

#[test]
fn cpu_info_from_cpuinfo_and_cpufreq() {
    let cpus = sample::read_cpu_descriptions(&fixtures()).expect("reads");
    let (_, bytes) = packet(67, |p| packets::write_cpu_info(p, 3, &cpus));
    let info = CpuInfoDecoder::new(&bytes);
    let got: Vec<_> = info
        .cpus()
        .map(|c| {
            (
                c.processor().map(str::to_owned),
                c.frequencies().collect::<Vec<_>>(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                Some("Test CPU @ 2.00GHz".into()),
                vec![600_000, 1_200_000, 1_800_000]
            ),
            (Some("Test CPU @ 2.00GHz".into()), vec![600_000, 1_200_000])
        ]
    );
}

#[test]
fn cpu_info_arm_identifier_only_when_complete() {
    use zerotrace_probes::procfs::cpuinfo::{ArmIds, CpuEntry};
    use zerotrace_probes::procfs::packets::CpuDescription;
    let full = ArmIds {
        implementer: Some(0x41),
        architecture: Some(8),
        variant: Some(1),
        part: Some(0xd0b),
        revision: Some(2),
    };
    let cpus = [
        CpuDescription {
            entry: CpuEntry {
                index: 0,
                name: None,
                arm: full,
            },
            ..CpuDescription::default()
        },
        CpuDescription {
            entry: CpuEntry {
                index: 1,
                name: None,
                arm: ArmIds {
                    revision: None,
                    ..full
                },
            },
            ..CpuDescription::default()
        },
    ];
    let (_, bytes) = packet(67, |p| packets::write_cpu_info(p, 3, &cpus));
    let info = CpuInfoDecoder::new(&bytes);
    let ids: Vec<_> = info
        .cpus()
        .map(|c| {
            c.arm_identifier().map(|a| {
                (
                    a.implementer(),
                    a.architecture(),
                    a.variant(),
                    a.part(),
                    a.revision(),
                )
            })
        })
        .collect();
    assert_eq!(
        ids,
        [
            Some((Some(0x41), Some(8), Some(1), Some(0xd0b), Some(2))),
            None
        ]
    );
}
