//! The `perf script` text reader over small inputs, split anywhere.

use crate::Loader;
use crate::storage::Storage;

/// Two samples of `busy` (pid 100, its main thread and another thread),
/// out of time order, and one of a process without a pid.
const TEXT: &str = "\
busy 100/101 [002] 20.000002:     250000 cpu-clock:u: \n\
\t    55d4a3c0113d work+0x14 (/tmp/busy)\n\
\t    55d4a3c01200 main+0x20 (/tmp/busy)\n\
\t    7f0000001000 __libc_start_main+0x80 (/usr/lib/libc.so.6)\n\
\n\
busy 100/100 [001] 10.000001:     250000 cpu-clock:u: \n\
\t    55d4a3c01200 main+0x20 (/tmp/busy)\n\
\t    7f0000001000 __libc_start_main+0x80 (/usr/lib/libc.so.6)\n\
\n\
swapper     0 [000] 30.000000:     250000 cpu-clock:\n\
\tffffffff81000000 [unknown] ([kernel.kallsyms])\n\
\n";

fn load(text: &str, step: usize) -> Storage {
    let mut l = Loader::new();
    for c in text.as_bytes().chunks(step.max(1)) {
        l.push(c).expect("push");
    }
    l.finish().expect("finish")
}

/// Each sample: (ts, tid, pid, thread name, frames leaf first as
/// `name@mapping`, depth of the root).
type Seen = (i64, i64, Option<i64>, String, Vec<String>, u32);

fn samples(st: &Storage) -> Vec<Seen> {
    let p = &st.profiling;
    let s = |id| st.strings.get(id).unwrap_or("").to_owned();
    p.samples
        .iter()
        .map(|smp| {
            assert_eq!(st.strings.get(smp.source), Some("perf_text"));
            let task = &p.task_contexts[smp.task_context_id.expect("task") as usize];
            let thread = &st.threads[task.utid.expect("utid") as usize];
            let pid = task.upid.map(|u| st.processes[u as usize].pid);
            let mut frames = Vec::new();
            let mut c = smp.callsite_id;
            let mut root_depth = 0;
            while let Some(id) = c {
                let cs = &p.callsites[id as usize];
                let f = &p.frames[cs.frame_id as usize];
                let m = &p.mappings[f.mapping as usize];
                frames.push(format!("{}@{}", s(f.name), s(m.name)));
                root_depth = cs.depth;
                c = cs.parent_id;
            }
            (smp.ts, thread.tid, pid, s(thread.name), frames, root_depth)
        })
        .collect()
}

#[test]
fn samples_become_callsites_on_their_threads_in_time_order() {
    let st = load(TEXT, TEXT.len());
    let got = samples(&st);
    assert_eq!(
        got,
        vec![
            (
                10_000_000_999,
                100,
                Some(100),
                "busy".into(),
                vec![
                    "main@/tmp/busy".into(),
                    "__libc_start_main@/usr/lib/libc.so.6".into()
                ],
                1
            ),
            (
                20_000_001_999,
                101,
                Some(100),
                "busy".into(),
                vec![
                    "work@/tmp/busy".into(),
                    "main@/tmp/busy".into(),
                    "__libc_start_main@/usr/lib/libc.so.6".into()
                ],
                1
            ),
            (
                30_000_000_000,
                0,
                None,
                "swapper".into(),
                vec!["[unknown]@[kernel.kallsyms]".into()],
                1
            ),
        ]
    );
    // One frame per symbol and mapping, one mapping per name.
    assert_eq!(st.profiling.frames.len(), 4);
    assert_eq!(st.profiling.mappings.len(), 3);
    // The main thread's command names its process.
    let busy = st.processes.iter().find(|p| p.pid == 100).expect("busy");
    assert_eq!(st.strings.get(busy.name), Some("busy"));
}

#[test]
fn the_tables_are_the_same_however_the_text_is_split() {
    let whole = samples(&load(TEXT, TEXT.len()));
    for step in [1, 2, 7, 64] {
        assert_eq!(samples(&load(TEXT, step)), whole, "step {step}");
    }
}

#[test]
fn malformed_lines_and_empty_samples_are_counted_and_skipped() {
    let text = "\
busy 100/100 1.000000: 1 cycles:\n\
\tnot-a-frame\n\
\t1 ignored+0x1 (/x)\n\
\n\
this is no sample line\n\
\t1 ignored2 (/x)\n\
\n\
busy 100/100 2.000000: 1 cycles:\n\
\n\
busy 100/100 3.000000: 1 cycles:\n\
\t1 kept (/x)\n\
\n\
busy 100/100 4.000000: 1 cycles:\n\
\t1 unfinished (/x)\n";
    let st = load(text, 5);
    let got = samples(&st);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, 3_000_000_000);
    assert_eq!(got[0].4, vec!["kept@/x".to_string()]);
    assert_eq!(st.stats.get("perf_text_malformed_line"), 2);
    assert_eq!(st.stats.get("perf_text_importer_sample_no_frames"), 1);
}

#[test]
fn a_symbol_keeps_its_spaces_and_loses_its_offset() {
    let text = "app\t7/8 [0] 1.000000: 1 cpu-clock:\n\
\t  1234 art::Foo::Bar(int, char const*)+0x40 (/system/lib64/libart.so)\n\
\t  5678 art_quick_invoke_stub (/apex/libart.so)\n\n";
    let got = samples(&load(text, 3));
    assert_eq!(
        got[0].4,
        vec![
            "art::Foo::Bar(int, char const*)@/system/lib64/libart.so".to_string(),
            "art_quick_invoke_stub@/apex/libart.so".to_string()
        ]
    );
}
