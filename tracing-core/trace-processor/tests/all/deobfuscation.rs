//! R8 deobfuscation of Java frames end to end on small traces written with
//! protozero: a frame whose mapping names no package takes its process's
//! app package from `packages_list`, and a frame whose symbols give an
//! obfuscated line covered by R8's line ranges gets the inline chain.

use protozero::Message;
use zerotrace_protos::protos::TracePacket;
use zerotrace_trace_processor::TraceProcessor;

use crate::common;
use common::{i, rows, s, trace};

/// One packet's bytes, written by `f`.
fn packet(f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(p.message());
    }
    w.finish().expect("heap writer")
}

/// pid 100 of uid 10001, the app `com.example.app`; BOOTTIME 0 is
/// MONOTONIC_COARSE 100.
fn app() -> Vec<Vec<u8>> {
    vec![
        packet(|p| {
            let mut snap = p.begin_nested(6);
            for (id, ts) in [(6u64, 0u64), (4, 100)] {
                let mut c = snap.begin_nested(1);
                c.append_uint64(1, id);
                c.append_uint64(2, ts);
            }
        }),
        packet(|p| {
            let mut t = p.begin_nested(2);
            let mut pr = t.begin_nested(1);
            pr.append_int32(1, 100);
            pr.append_int32(2, 1);
            pr.append_bytes(3, b"com.example.app");
            pr.append_int32(5, 10_001);
        }),
        packet(|p| {
            let mut l = p.begin_nested(47);
            let mut pk = l.begin_nested(1);
            pk.append_bytes(1, b"com.example.app");
            pk.append_uint64(2, 10_001);
        }),
    ]
}

/// One heapprofd dump of pid 100 with frame `a.a` at `pc` on `mapping`.
fn profile(mapping: &str, pc: u64) -> Vec<u8> {
    packet(|p| {
        p.append_uint32(10, 1);
        let mut pp = p.begin_nested(37);
        for (iid, text) in [
            (1u64, &b"a.a"[..]),
            (2, mapping.as_bytes()),
            (3, &[0xab][..]),
        ] {
            let mut st = pp.begin_nested(1);
            st.append_uint64(1, iid);
            st.append_bytes(2, text);
        }
        {
            let mut f = pp.begin_nested(2);
            f.append_uint64(1, 1);
            f.append_uint64(2, 1);
            f.append_uint64(3, 1);
            f.append_uint64(4, pc);
        }
        {
            let mut c = pp.begin_nested(3);
            c.append_uint64(1, 1);
            c.append_uint64(2, 1);
        }
        {
            let mut m = pp.begin_nested(4);
            m.append_uint64(1, 1);
            m.append_uint64(2, 3);
            m.append_uint64(7, 2);
        }
        {
            let mut d = pp.begin_nested(5);
            d.append_uint64(1, 100);
            d.append_uint64(9, 110);
            let mut smp = d.begin_nested(2);
            smp.append_uint64(1, 1);
            smp.append_uint64(2, 1000);
            smp.append_uint64(5, 1);
        }
    })
}

/// `a.a` at `pc` of `path` is line `line`.
fn symbols(path: &str, pc: u64, line: u32) -> Vec<u8> {
    packet(|p| {
        let mut m = p.begin_nested(61);
        m.append_bytes(1, path.as_bytes());
        m.append_bytes(2, &[0xab]);
        let mut a = m.begin_nested(3);
        a.append_uint64(1, pc);
        let mut l = a.begin_nested(2);
        l.append_bytes(1, b"a.a");
        l.append_bytes(2, b"Main.java");
        l.append_uint32(3, line);
    })
}

/// `a` is `com.example.Main`; its method `a` is, at obfuscated line 1,
/// `foo` (source line 54) inlined into `test` (line 50), and anywhere else
/// `bar` (no lines).
fn mapping() -> Vec<u8> {
    packet(|p| {
        let mut m = p.begin_nested(64);
        m.append_bytes(1, b"com.example.app");
        let mut c = m.begin_nested(3);
        c.append_bytes(1, b"a");
        c.append_bytes(2, b"com.example.Main");
        for (name, lines) in [("foo", Some((1, 1, 54))), ("test", Some((1, 1, 50)))] {
            let mut mm = c.begin_nested(4);
            mm.append_bytes(1, b"a");
            mm.append_bytes(2, name.as_bytes());
            if let Some((start, end, source)) = lines {
                mm.append_uint32(3, start);
                mm.append_uint32(4, end);
                mm.append_uint32(5, source);
            }
        }
    })
}

#[test]
fn a_frame_of_no_package_takes_its_apps_package() {
    let mut packets = app();
    packets.push(profile("data/app/com.example.app/base.apk", 0x10));
    packets.push(mapping());
    let tp = TraceProcessor::from_bytes(&trace(&packets)).expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT name, deobfuscated_name FROM stack_profile_frame"
        ),
        vec![vec![
            s("a.a"),
            s("com.example.Main.foo | com.example.Main.test")
        ]]
    );
}

#[test]
fn a_covered_obfuscated_line_becomes_the_inline_chain() {
    let path = "/data/app/com.example.app-1/base.apk";
    let mut packets = app();
    packets.push(profile(path, 0x10));
    packets.push(symbols(path, 0x10, 1));
    packets.push(mapping());
    let tp = TraceProcessor::from_bytes(&trace(&packets)).expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT f.deobfuscated_name, s.name, s.line_number, s.inlined \
             FROM stack_profile_frame f JOIN stack_profile_symbol s USING (symbol_set_id) \
             ORDER BY s.id"
        ),
        vec![
            vec![
                s("com.example.Main.test"),
                s("com.example.Main.foo"),
                i(54),
                i(1)
            ],
            vec![
                s("com.example.Main.test"),
                s("com.example.Main.test"),
                i(50),
                i(0)
            ],
        ]
    );
}
