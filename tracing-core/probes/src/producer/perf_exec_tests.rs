//! An `exec` seen by a `linux.perf` instance: the process's unwinding
//! state is dropped, and the next samples are unwound against the new
//! image's mappings (fabricated records, the fake unwinder and `/proc`).

use super::*;

#[test]
fn an_exec_drops_the_processs_unwinding_state() {
    let root = fake_proc(&[(42, b"/bin/sh\0")]);
    let (mut p, calls) = probe(dwarf_with_scope(|_| {}), &root);
    let l = p.layout;
    let mut comm = Vec::new();
    comm.extend(42u32.to_ne_bytes());
    comm.extend(42u32.to_ne_bytes());
    comm.extend(b"dd\0\0\0\0\0\0");
    let exec = rec(record::COMM, crate::perf::abi::MISC_COMM_EXEC, &comm);
    feed(
        &mut p,
        &[
            sample_rec(&l, 42, USER, &[1, 1], false),
            exec,
            sample_rec(&l, 42, USER, &[1, 1], false),
        ],
    );
    let c = calls.lock().unwrap();
    assert_eq!(c.unwound, [42, 42]);
    assert_eq!(c.forgotten, [42]);
}

/// The mapping path components a packet interns.
fn mapping_paths(packet: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for f in Decoder::new(packet).filter_map(Result::ok) {
        if f.id != packet_field::INTERNED_DATA {
            continue;
        }
        for g in Decoder::new(f.as_bytes().unwrap()).filter_map(Result::ok) {
            if g.id == zerotrace_protos::upstream_tables::interned_data_field::MAPPING_PATHS {
                let s = zerotrace_protos::protos::InternedStringDecoder::new(g.as_bytes().unwrap());
                out.push(String::from_utf8_lossy(s.str().unwrap_or_default()).into_owned());
            }
        }
    }
    out
}

/// With the real unwinder over a fake `/proc`: a process's maps are kept
/// from its first sample (a new image in them is not seen), and an exec
/// record drops them, as does the periodic clear, so the next sample
/// places its pc in the new image.
#[test]
fn after_an_exec_the_unwinder_reads_the_new_image() {
    let root = fake_proc(&[(42, b"/bin/a\0")]);
    let maps = |path: &str| {
        std::fs::write(
            root.join("proc/42/maps"),
            format!("00400000-00401000 r-xp 00000000 00:00 0 {path}\n"),
        )
        .unwrap();
    };
    maps("/bin/a");
    let o = config(|c| {
        c.begin_callstack_sampling().set_user_frames_raw(4);
    });
    let (mut p, _) = probe(o, &root);
    p.unwinder = Some(Box::new(DwarfStacks(
        crate::perf::unwind::Unwinder::with_proc_root(ProcRoot::at(&*root)),
        0,
    )));
    let sample = || {
        let mut b = Vec::new();
        b.extend(42u32.to_ne_bytes());
        b.extend(42u32.to_ne_bytes());
        b.extend(words(&[1, 1, 7]));
        b.extend(words(&[2, crate::perf::abi::context::USER, 0x400100]));
        rec(record::SAMPLE, USER, &b)
    };
    let mut comm = Vec::new();
    comm.extend(42u32.to_ne_bytes());
    comm.extend(42u32.to_ne_bytes());
    comm.extend(b"b\0\0\0\0\0\0\0");
    let exec = rec(record::COMM, crate::perf::abi::MISC_COMM_EXEC, &comm);
    let mut sink = BufferSink::default();
    p.handle_bytes(0, &sample(), &mut sink, 0, &mut 0);
    // Paths are interned by component, as upstream interns them.
    assert_eq!(mapping_paths(&sink.packets[0]), ["bin", "a"]);
    // The image changes (as an exec makes it) but no record says so: the
    // kept maps still place the pc in the old one.
    maps("/bin/b");
    p.handle_bytes(0, &sample(), &mut sink, 0, &mut 0);
    assert!(mapping_paths(&sink.packets[1]).is_empty());
    // The exec record: the state is dropped and read again.
    p.handle_bytes(0, &[exec, sample()].concat(), &mut sink, 0, &mut 0);
    assert_eq!(mapping_paths(&sink.packets[2]), ["b"]);
    // `unwind_state_clear_period_ms` (five minutes by default): every
    // process's state is dropped, and read again on its next sample.
    maps("/bin/c");
    p.arm_timers(0);
    p.poll(300_000_000_000, &mut sink);
    p.handle_bytes(0, &sample(), &mut sink, 0, &mut 0);
    assert_eq!(mapping_paths(sink.packets.last().unwrap()), ["c"]);
}
