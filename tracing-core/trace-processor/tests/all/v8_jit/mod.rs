//! V8's JIT code records end to end on traces written with protozero:
//! each record kind into the V8 and JIT tables, isolates, scripts and
//! functions made once across sequences and intervals, code loaded over
//! and moved (here); perf samples whose frames fall in generated code,
//! named after the function there when they were taken (`samples.rs`);
//! garbled records and the no-overlap invariant (`invariants.rs`). The
//! helpers that write the records are this module's.

mod invariants;
mod samples;

use protozero::Message;
use zerotrace_protos::protos::TracePacket;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, rows, s, trace};

const NULL: Value = Value::Null;

fn packet(f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(p.message());
    }
    w.finish().expect("heap writer")
}

fn stat(tp: &TraceProcessor, name: &str) -> i64 {
    let r = rows(
        tp,
        &format!("SELECT coalesce(sum(value), 0) FROM stats WHERE name = '{name}'"),
    );
    match r.first().and_then(|r| r.first()) {
        Some(Value::Int(v)) => *v,
        _ => 0,
    }
}

/// `TracePacket` fields.
const TIMESTAMP: u32 = 8;
const SEQUENCE_ID: u32 = 10;
const INTERNED_DATA: u32 = 12;
const SEQUENCE_FLAGS: u32 = 13;
const DEFAULTS: u32 = 59;
const JS_CODE: u32 = 99;
const INTERNAL_CODE: u32 = 100;
const WASM_CODE: u32 = 101;
const REGEXP_CODE: u32 = 102;
const CODE_MOVE: u32 = 103;
const PERF_SAMPLE: u32 = 66;

/// An isolate's interned fields: iid, pid, V8's id, code range (base,
/// size, shared), embedded blob (start, size).
struct Isolate {
    iid: u64,
    pid: u32,
    id: i32,
    code_range: Option<(u64, u64, bool)>,
    blob: Option<(u64, u64)>,
}

fn isolate(m: &mut Message<'_>, iso: &Isolate) {
    let mut e = m.begin_nested(35);
    e.append_uint64(1, iso.iid);
    e.append_uint32(2, iso.pid);
    e.append_int32(3, iso.id);
    if let Some((base, size, shared)) = iso.code_range {
        let mut cr = e.begin_nested(4);
        cr.append_uint64(1, base);
        cr.append_uint64(2, size);
        cr.append_bool(4, shared);
    }
    if let Some((start, size)) = iso.blob {
        e.append_uint64(5, start);
        e.append_uint64(6, size);
    }
}

/// A script (iid, V8's id, Latin-1 name) and a function in it (iid,
/// name iid and Latin-1 name, line and column).
fn script_and_function(
    m: &mut Message<'_>,
    script: (u64, i32, &str),
    function: (u64, u64, &str, u32, u32),
) {
    {
        let mut e = m.begin_nested(33);
        e.append_uint64(1, script.0);
        e.append_int32(2, script.1);
        e.append_int32(3, 1);
        e.begin_nested(4).append_bytes(1, script.2.as_bytes());
        e.begin_nested(5).append_bytes(1, b"let x;");
    }
    {
        let mut e = m.begin_nested(31);
        e.append_uint64(1, function.1);
        e.append_bytes(2, function.2.as_bytes());
    }
    let mut e = m.begin_nested(32);
    e.append_uint64(1, function.0);
    e.append_uint64(2, function.1);
    e.append_uint64(3, script.0);
    e.append_int32(5, 1);
    e.append_uint32(7, function.3);
    e.append_uint32(8, function.4);
}

/// A packet of sequence `seq` at `ts` whose payload `field` is written by
/// `body`.
fn record(seq: u32, ts: u64, field: u32, body: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(|p| {
        p.append_uint32(SEQUENCE_ID, seq);
        p.append_uint64(TIMESTAMP, ts);
        let mut m = p.begin_nested(field);
        body(&mut m);
    })
}

/// JavaScript code: isolate iid, function iid, tier, (start, size).
fn js(seq: u32, ts: u64, function: u64, tier: i32, range: Option<(u64, u64)>) -> Vec<u8> {
    record(seq, ts, JS_CODE, |m| {
        m.append_uint64(1, 1);
        m.append_uint64(3, function);
        m.append_int32(4, tier);
        if let Some((start, size)) = range {
            m.append_uint64(5, start);
            m.append_uint64(6, size);
        } else {
            m.append_bytes(8, &[1, 2, 3]);
        }
    })
}

/// Isolate 1 of pid 40 (code range 0x10000..0x20000) with function 3
/// (`hot`, at 7:1) on sequence 1, whose records default to tid 41.
fn hot_isolate() -> Vec<u8> {
    packet(|p| {
        p.append_uint32(SEQUENCE_ID, 1);
        p.append_uint32(SEQUENCE_FLAGS, 1);
        p.append_uint64(TIMESTAMP, 1);
        p.begin_nested(DEFAULTS)
            .begin_nested(99)
            .append_uint32(1, 41);
        let mut m = p.begin_nested(INTERNED_DATA);
        isolate(
            &mut m,
            &Isolate {
                iid: 1,
                pid: 40,
                id: 1,
                code_range: Some((0x10000, 0x10000, false)),
                blob: None,
            },
        );
        script_and_function(&mut m, (2, 5, "hot.js"), (3, 4, "hot", 7, 1));
    })
}

#[test]
fn every_record_kind_lands_in_its_table_with_its_jit_code() {
    let setup = packet(|p| {
        p.append_uint32(SEQUENCE_ID, 1);
        p.append_uint32(SEQUENCE_FLAGS, 1);
        p.append_uint64(TIMESTAMP, 90);
        p.begin_nested(DEFAULTS)
            .begin_nested(99)
            .append_uint32(1, 11);
        let mut m = p.begin_nested(INTERNED_DATA);
        isolate(
            &mut m,
            &Isolate {
                iid: 1,
                pid: 10,
                id: 1,
                code_range: Some((0x1000, 0x1000, false)),
                blob: Some((0x8000, 0x100)),
            },
        );
        script_and_function(&mut m, (1, 5, "a.js"), (1, 1, "foo", 3, 4));
        let mut w = m.begin_nested(34);
        w.append_uint64(1, 1);
        w.append_int32(2, 9);
        w.append_string(3, "m.wasm");
        w.append_bytes(4, b"\0asm");
    });
    let tp = TraceProcessor::from_bytes(&trace(&[
        setup,
        js(1, 100, 1, 5, Some((0x1100, 0x40))),
        js(1, 110, 1, 1, None),
        record(1, 120, INTERNAL_CODE, |m| {
            m.append_uint64(1, 1);
            m.append_uint32(2, 12);
            m.append_string(3, "Builtin");
            m.append_int32(4, 3);
            m.append_uint64(6, 0x8010);
            m.append_uint64(7, 0x20);
            m.append_bytes(8, &[0xcc; 0x20]);
        }),
        record(1, 130, WASM_CODE, |m| {
            m.append_uint64(1, 1);
            m.append_uint64(3, 1);
            m.append_string(4, "w");
            m.append_int32(5, 1);
            m.append_int32(6, 7);
            m.append_uint64(7, 0x1200);
            m.append_uint64(8, 0x10);
        }),
        record(1, 140, REGEXP_CODE, |m| {
            m.append_uint64(1, 1);
            m.begin_nested(3).append_bytes(1, b"a+");
            m.append_uint64(4, 0x1300);
            m.append_uint64(5, 0x10);
        }),
        // Outside every code range, then a tier V8 does not say.
        js(1, 150, 1, 2, Some((0x3000, 0x10))),
        js(1, 160, 1, 0, Some((0x1400, 0x10))),
    ]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT p.pid, internal_isolate_id, embedded_blob_code_start_address, \
             embedded_blob_code_size, code_range_base_address, code_range_size, \
             shared_code_range, embedded_blob_code_copy_start_address \
             FROM __intrinsic_v8_isolate JOIN process p USING (upid)"
        ),
        vec![vec![
            i(10),
            i(1),
            i(0x8000),
            i(0x100),
            i(0x1000),
            i(0x1000),
            i(0),
            NULL
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.id, create_ts, estimated_delete_ts, t.tid, upid IS NOT NULL, \
             start_address, size, function_name, native_code_base64, jit_code_id \
             FROM __intrinsic_jit_code c JOIN thread t USING (utid) ORDER BY c.id"
        ),
        vec![
            vec![
                i(0),
                i(100),
                NULL,
                i(11),
                i(1),
                i(0x1100),
                i(0x40),
                s("foo"),
                s(""),
                i(0)
            ],
            vec![
                i(1),
                i(120),
                NULL,
                i(12),
                i(1),
                i(0x8010),
                i(0x20),
                s("Builtin"),
                s(&format!("{}zMw=", "zMzM".repeat(10))),
                i(1)
            ],
            vec![
                i(2),
                i(130),
                NULL,
                i(11),
                i(1),
                i(0x1200),
                i(0x10),
                s("w"),
                s(""),
                i(2)
            ],
            vec![
                i(3),
                i(140),
                NULL,
                i(11),
                i(1),
                i(0x1300),
                i(0x10),
                s("[RegExp]"),
                s(""),
                i(3)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT jit_code_id, v8_js_function_id, tier, bytecode_base64 \
             FROM __intrinsic_v8_js_code ORDER BY id"
        ),
        vec![
            vec![i(0), i(0), s("TURBOFAN"), NULL],
            vec![NULL, i(0), s("IGNITION"), s("AQID")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT jit_code_id, v8_isolate_id, function_name, code_type \
             FROM __intrinsic_v8_internal_code"
        ),
        vec![vec![i(1), i(0), s("Builtin"), s("BUILTIN")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT jit_code_id, v8_isolate_id, v8_wasm_script_id, function_name, tier, \
             code_offset_in_module FROM __intrinsic_v8_wasm_code"
        ),
        vec![vec![i(2), i(0), i(0), s("w"), s("LIFTOFF"), i(0)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT jit_code_id, v8_isolate_id, pattern FROM __intrinsic_v8_regexp_code"
        ),
        vec![vec![i(3), i(0), s("a+")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT v8_isolate_id, internal_script_id, script_type, name, source \
             FROM __intrinsic_v8_js_script"
        ),
        vec![vec![i(0), i(5), s("NORMAL"), s("a.js"), s("let x;")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT v8_isolate_id, internal_script_id, url, wire_bytes_base64, source \
             FROM __intrinsic_v8_wasm_script"
        ),
        vec![vec![i(0), i(9), s("m.wasm"), s("AGFzbQ=="), NULL]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, v8_js_script_id, is_toplevel, kind, line, col \
             FROM __intrinsic_v8_js_function"
        ),
        vec![vec![s("foo"), i(0), i(0), s("NORMAL_FUNCTION"), i(3), i(4)]]
    );
    // The optimized code's function is a symbol with its script and line.
    assert_eq!(
        rows(
            &tp,
            "SELECT symbol_set_id, name, source_file, line_number FROM stack_profile_symbol"
        ),
        vec![vec![i(0), s("foo"), s("a.js"), i(3)]]
    );
    // Bytecode has no code range; the tier-2 code lies in none.
    assert_eq!(stat(&tp, "v8_code_load_missing_code_range"), 1);
    assert_eq!(stat(&tp, "v8_no_code_range"), 1);
    assert_eq!(stat(&tp, "v8_unknown_code_type"), 1);
}

/// The interned data of a sequence: isolate `iid` (pid 20, V8 id 1), a
/// script (V8 id 5) and a function (`f` at 2:3) under the given iids.
fn interning(seq: u32, ts: u64, iid: u64, clear: bool) -> Vec<u8> {
    packet(|p| {
        p.append_uint32(SEQUENCE_ID, seq);
        if clear {
            p.append_uint32(SEQUENCE_FLAGS, 1);
        }
        p.append_uint64(TIMESTAMP, ts);
        let mut m = p.begin_nested(INTERNED_DATA);
        isolate(
            &mut m,
            &Isolate {
                iid,
                pid: 20,
                id: 1,
                code_range: Some((0x1000, 0x1000, false)),
                blob: None,
            },
        );
        script_and_function(&mut m, (iid + 1, 5, "s.js"), (iid + 2, iid + 3, "f", 2, 3));
    })
}

/// JavaScript code of isolate `iid` (its function `iid + 2`) at `start`.
fn js_of(seq: u32, ts: u64, iid: u64, start: u64) -> Vec<u8> {
    record(seq, ts, JS_CODE, |m| {
        m.append_uint64(1, iid);
        m.append_uint32(2, 21);
        m.append_uint64(3, iid + 2);
        m.append_int32(4, 3);
        m.append_uint64(5, start);
        m.append_uint64(6, 0x10);
    })
}

#[test]
fn isolates_scripts_and_functions_are_made_once_across_sequences() {
    let tp = TraceProcessor::from_bytes(&trace(&[
        interning(1, 10, 1, true),
        interning(2, 10, 7, true),
        js_of(1, 20, 1, 0x1000),
        js_of(2, 30, 7, 0x1100),
        // A new interval of sequence 1 with new iids for the same things.
        interning(1, 40, 100, true),
        js_of(1, 50, 100, 0x1200),
    ]))
    .expect("trace");
    let count = |table: &str| rows(&tp, &format!("SELECT count(*) FROM {table}"));
    assert_eq!(count("__intrinsic_v8_isolate"), vec![vec![i(1)]]);
    assert_eq!(count("__intrinsic_v8_js_script"), vec![vec![i(1)]]);
    assert_eq!(count("__intrinsic_v8_js_function"), vec![vec![i(1)]]);
    assert_eq!(
        rows(
            &tp,
            "SELECT jit_code_id, v8_js_function_id, tier FROM __intrinsic_v8_js_code ORDER BY id"
        ),
        vec![
            vec![i(0), i(0), s("MAGLEV")],
            vec![i(1), i(0), s("MAGLEV")],
            vec![i(2), i(0), s("MAGLEV")],
        ]
    );
    // Each code's thread is its record's tid in the isolate's process.
    assert_eq!(
        rows(
            &tp,
            "SELECT DISTINCT t.tid, p.pid FROM __intrinsic_jit_code \
             JOIN thread t USING (utid) JOIN process p USING (upid)"
        ),
        vec![vec![i(21), i(20)]]
    );
}

#[test]
fn missing_interned_data_code_ranges_and_threads_are_counted() {
    let no_range = packet(|p| {
        p.append_uint32(SEQUENCE_ID, 1);
        p.append_uint32(SEQUENCE_FLAGS, 1);
        p.append_uint64(TIMESTAMP, 10);
        let mut m = p.begin_nested(INTERNED_DATA);
        isolate(
            &mut m,
            &Isolate {
                iid: 1,
                pid: 30,
                id: 2,
                code_range: None,
                blob: None,
            },
        );
        script_and_function(&mut m, (2, 5, "s.js"), (3, 4, "f", 1, 1));
        isolate(
            &mut m,
            &Isolate {
                iid: 9,
                pid: 30,
                id: 3,
                code_range: Some((0x1000, 0x100, false)),
                blob: None,
            },
        );
    });
    // No tid and no defaults.
    let no_tid = record(1, 40, INTERNAL_CODE, |m| {
        m.append_uint64(1, 9);
        m.append_uint64(6, 0x1000);
        m.append_uint64(7, 0x10);
    });
    let tp = TraceProcessor::from_bytes(&trace(&[
        no_range,
        js(1, 20, 3, 5, Some((0x1000, 0x10))),
        js(1, 30, 3, 5, Some((0x1000, 0x10))),
        // An isolate iid nobody interned.
        record(1, 35, CODE_MOVE, |m| {
            m.append_uint64(1, 77);
            m.append_uint32(2, 1);
        }),
        no_tid,
    ]))
    .expect("trace");
    assert_eq!(stat(&tp, "v8_isolate_has_no_code_range"), 1);
    assert_eq!(stat(&tp, "v8_intern_errors"), 1);
    assert_eq!(stat(&tp, "v8_no_defaults"), 1);
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM __intrinsic_v8_isolate"),
        vec![vec![i(1)]]
    );
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM __intrinsic_jit_code"),
        vec![vec![i(0)]]
    );
}

#[test]
fn code_loaded_over_other_code_deletes_it_and_moves_carry_it() {
    let move_code = |ts: u64, from: u64, to: u64| {
        record(1, ts, CODE_MOVE, move |m| {
            m.append_uint64(1, 1);
            m.append_uint32(2, 21);
            m.append_uint64(3, from);
            m.append_uint64(4, to);
            m.append_uint64(5, 0x10);
        })
    };
    let tp = TraceProcessor::from_bytes(&trace(&[
        interning(1, 5, 1, true),
        js_of(1, 10, 1, 0x1000),
        js_of(1, 20, 1, 0x1008),
        move_code(30, 0x1008, 0x1400),
        // Nothing starts at 0x1100: no change.
        move_code(35, 0x1100, 0x1500),
        js_of(1, 40, 1, 0x1404),
        js_of(1, 50, 1, 0x1008),
    ]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT id, create_ts, estimated_delete_ts, start_address \
             FROM __intrinsic_jit_code ORDER BY id"
        ),
        vec![
            vec![i(0), i(10), i(20), i(0x1000)],
            // Moved away at 30, so the load at 50 over its old place
            // leaves it; the load at 40 over its new place deletes it.
            vec![i(1), i(20), i(40), i(0x1008)],
            vec![i(2), i(40), NULL, i(0x1404)],
            vec![i(3), i(50), NULL, i(0x1008)],
        ]
    );
}

#[test]
fn interpreted_code_in_a_cache_byte_offsets_and_utf16_names() {
    let interning = packet(|p| {
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
                code_range: Some((0x10000, 0x10000, false)),
                blob: None,
            },
        );
        {
            let mut e = m.begin_nested(33);
            e.append_uint64(1, 2);
            e.append_int32(2, 5);
            e.append_int32(3, 3);
        }
        {
            // "né" in UTF-16BE.
            let mut e = m.begin_nested(31);
            e.append_uint64(1, 4);
            e.append_bytes(4, &[0, b'n', 0, 0xe9]);
        }
        let mut e = m.begin_nested(32);
        e.append_uint64(1, 3);
        e.append_uint64(2, 4);
        e.append_uint64(3, 2);
        e.append_bool(4, true);
        e.append_int32(5, 12);
        e.append_uint32(6, 42);
    });
    let tp = TraceProcessor::from_bytes(&trace(&[
        interning,
        // Bytecode whose frames run as native code: in the cache.
        record(1, 10, JS_CODE, |m| {
            m.append_uint64(1, 1);
            m.append_uint32(2, 41);
            m.append_uint64(3, 3);
            m.append_int32(4, 1);
            m.append_uint64(5, 0x10100);
            m.append_uint64(6, 0x4);
            m.append_bytes(7, &[1, 2, 3, 4]);
        }),
    ]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT f.name, f.is_toplevel, f.kind, f.line, f.col, s.script_type, s.name, \
             s.source, c.jit_code_id, c.tier, c.bytecode_base64, j.native_code_base64 \
             FROM __intrinsic_v8_js_code c \
             JOIN __intrinsic_v8_js_function f ON f.id = c.v8_js_function_id \
             JOIN __intrinsic_v8_js_script s ON s.id = f.v8_js_script_id \
             JOIN __intrinsic_jit_code j ON j.id = c.jit_code_id"
        ),
        vec![vec![
            s("n\u{e9}"),
            i(1),
            s("ARROW_FUNCTION"),
            i(1),
            i(42),
            s("MODULE"),
            s(""),
            s(""),
            i(0),
            s("IGNITION"),
            NULL,
            s("AQIDBA=="),
        ]]
    );
    assert_eq!(stat(&tp, "v8_no_code_range"), 0);
}
