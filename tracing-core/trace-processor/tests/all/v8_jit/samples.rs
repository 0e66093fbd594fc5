//! Perf samples whose frames fall in V8's generated code: each frame is
//! the frame of the function there when the sample was taken, made again
//! when other code took the place, and named after its code by the
//! callstack modules.

use super::*;

/// Sequence 2's interned stacks: a mapping of pid 40's code range (iid 1,
/// 0x10000..0x20000), frames 1 and 3 (pc 0x100) and 2 (pc 0x900, no
/// code there), callstacks 1 = [1], 2 = [2], 3 = [1] and 4 = [3].
fn perf_stacks() -> Vec<u8> {
    packet(|p| {
        p.append_uint32(SEQUENCE_ID, 2);
        p.append_uint32(SEQUENCE_FLAGS, 1);
        p.append_uint64(TIMESTAMP, 1);
        let mut m = p.begin_nested(INTERNED_DATA);
        {
            let mut e = m.begin_nested(17);
            e.append_uint64(1, 1);
            e.append_bytes(2, b"[anon:v8]");
        }
        {
            let mut mp = m.begin_nested(19);
            mp.append_uint64(1, 1);
            mp.append_uint64(4, 0x10000);
            mp.append_uint64(5, 0x20000);
            mp.append_uint64(7, 1);
        }
        for (iid, pc) in [(1u64, 0x100u64), (2, 0x900), (3, 0x100)] {
            let mut f = m.begin_nested(6);
            f.append_uint64(1, iid);
            f.append_uint64(3, 1);
            f.append_uint64(4, pc);
        }
        for (iid, frame) in [(1u64, 1u64), (2, 2), (3, 1), (4, 3)] {
            let mut c = m.begin_nested(7);
            c.append_uint64(1, iid);
            c.append_uint64(2, frame);
        }
    })
}

fn sample(ts: u64, callstack: u64) -> Vec<u8> {
    record(2, ts, PERF_SAMPLE, |m| {
        m.append_uint32(1, 0);
        m.append_uint32(2, 40);
        m.append_uint32(3, 41);
        m.append_uint64(4, callstack);
    })
}

#[test]
fn samples_in_generated_code_are_frames_of_the_function_there() {
    let v8 = packet(|p| {
        p.append_uint32(SEQUENCE_ID, 1);
        p.append_uint32(SEQUENCE_FLAGS, 1);
        p.append_uint64(TIMESTAMP, 1);
        let mut m = p.begin_nested(INTERNED_DATA);
        isolate(
            &mut m,
            &Isolate {
                iid: 1,
                pid: 40,
                id: 1,
                code_range: Some((0x10000, 0x10000, true)),
                blob: None,
            },
        );
        script_and_function(&mut m, (2, 5, "hot.js"), (3, 4, "hot", 7, 1));
        script_and_function(&mut m, (5, 6, "cold.js"), (6, 7, "cold", 9, 1));
    });
    let code = |ts: u64, function: u64| {
        record(1, ts, JS_CODE, move |m| {
            m.append_uint64(1, 1);
            m.append_uint32(2, 41);
            m.append_uint64(3, function);
            m.append_int32(4, 5);
            m.append_uint64(5, 0x10100);
            m.append_uint64(6, 0x40);
        })
    };
    let tp = TraceProcessor::from_bytes(&trace(&[
        v8,
        perf_stacks(),
        code(10, 3),
        sample(20, 1),
        sample(25, 2),
        record(1, 30, CODE_MOVE, |m| {
            m.append_uint64(1, 1);
            m.append_uint32(2, 41);
            m.append_uint64(3, 0x10100);
            m.append_uint64(4, 0x10800);
            m.append_uint64(5, 0x40);
        }),
        code(40, 6),
        // The same frame iid, seen after other code took its place.
        sample(50, 3),
    ]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT ps.ts, f.name, f.rel_pc, sym.source_file, sym.line_number, jf.jit_code_id \
             FROM perf_sample ps \
             JOIN stack_profile_callsite c ON c.id = ps.callsite_id \
             JOIN stack_profile_frame f ON f.id = c.frame_id \
             LEFT JOIN stack_profile_symbol sym USING (symbol_set_id) \
             LEFT JOIN __intrinsic_jit_frame jf ON jf.frame_id = f.id \
             ORDER BY ps.ts"
        ),
        vec![
            vec![i(20), s("hot"), i(0x100), s("hot.js"), i(7), i(0)],
            vec![i(25), s("[+0x900]"), i(0x900), NULL, NULL, NULL],
            vec![i(50), s("cold"), i(0x100), s("cold.js"), i(9), i(1)],
        ]
    );
    assert_eq!(stat(&tp, "jit_unknown_frame"), 1);
    // The callstack forest names a frame in JavaScript code after its
    // function, place and tier.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE callstacks.stack_profile; \
             SELECT name, line_number, column_number FROM _callstack_spc_forest ORDER BY id"
        ),
        vec![
            vec![s("JS: hot:7:1 [turbofan]"), i(7), i(1)],
            vec![s("[+0x900]"), NULL, i(0)],
            vec![s("JS: cold:9:1 [turbofan]"), i(9), i(1)],
        ]
    );
    // The modules' views.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE v8.jit; INCLUDE PERFETTO MODULE stack_trace.jit; \
             SELECT f.name, s.name, c.tier, j.create_ts, j.estimated_delete_ts, \
             length(j.native_code) \
             FROM _jit_frame jf JOIN _jit_code j USING (jit_code_id) \
             JOIN _v8_js_code c USING (jit_code_id) \
             JOIN v8_js_function f USING (v8_js_function_id) \
             JOIN v8_js_script s USING (v8_js_script_id) ORDER BY jf.frame_id"
        ),
        vec![
            vec![s("hot"), s("hot.js"), s("TURBOFAN"), i(10), NULL, i(0)],
            vec![s("cold"), s("cold.js"), s("TURBOFAN"), i(40), NULL, i(0)],
        ]
    );
}

#[test]
fn a_mapping_seen_before_its_isolate_resolves_through_it_afterwards() {
    let tp = TraceProcessor::from_bytes(&trace(&[
        hot_isolate(),
        perf_stacks(),
        // Before any V8 record: a plain frame of the mapping.
        sample(5, 1),
        js(1, 10, 3, 4, Some((0x10100, 0x40))),
        // Another frame iid at the same pc, after the code was loaded.
        sample(20, 4),
    ]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT ps.ts, f.name, jf.jit_code_id FROM perf_sample ps \
             JOIN stack_profile_callsite c ON c.id = ps.callsite_id \
             JOIN stack_profile_frame f ON f.id = c.frame_id \
             LEFT JOIN __intrinsic_jit_frame jf ON jf.frame_id = f.id ORDER BY ps.ts"
        ),
        vec![vec![i(5), s(""), NULL], vec![i(20), s("hot"), i(0)]]
    );
}
