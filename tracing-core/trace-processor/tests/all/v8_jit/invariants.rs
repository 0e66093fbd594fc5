//! What must hold of any V8 records: garbled ones and ranges at the top
//! of memory load without a panic, and live code never overlaps.

use super::*;

#[test]
fn garbled_records_and_ranges_at_the_top_of_memory_never_panic() {
    // Ranges that would wrap past the top of the address space, and
    // payloads of pseudo-random bytes for every V8 field.
    let mut packets = vec![packet(|p| {
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
                code_range: Some((u64::MAX - 0x10, 0x1000, true)),
                blob: Some((u64::MAX - 4, 0x100)),
            },
        );
        script_and_function(&mut m, (2, 5, "s.js"), (3, 4, "f", 1, 1));
    })];
    packets.push(js(1, 2, 3, 5, Some((u64::MAX - 8, 0x100))));
    packets.push(record(1, 3, CODE_MOVE, |m| {
        m.append_uint64(1, 1);
        m.append_uint64(3, u64::MAX - 8);
        m.append_uint64(4, u64::MAX);
        m.append_uint64(5, u64::MAX);
    }));
    let mut state = 0x1234_5678_u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 33) as u8
    };
    for round in 0..200u64 {
        let field =
            [JS_CODE, INTERNAL_CODE, WASM_CODE, REGEXP_CODE, CODE_MOVE][(round % 5) as usize];
        let len = usize::from(next() % 40);
        let body: Vec<u8> = (0..len).map(|_| next()).collect();
        let kind = 31 + (round % 5) as u32;
        let interned: Vec<u8> = (0..len).map(|_| next()).collect();
        packets.push(packet(|p| {
            p.append_uint32(SEQUENCE_ID, 2);
            p.append_uint64(TIMESTAMP, 10 + round);
            p.begin_nested(INTERNED_DATA).append_bytes(kind, &interned);
        }));
        packets.push(packet(|p| {
            p.append_uint32(SEQUENCE_ID, 2);
            p.append_uint64(TIMESTAMP, 10 + round);
            p.append_bytes(field, &body);
        }));
    }
    let tp = TraceProcessor::from_bytes(&trace(&packets)).expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*) FROM __intrinsic_v8_isolate WHERE upid IS NOT NULL"
        ),
        rows(&tp, "SELECT count(*) FROM __intrinsic_v8_isolate")
    );
}

#[test]
fn live_code_never_overlaps_in_one_process() {
    // 300 loads of pseudo-random places and sizes in one code range: code
    // that overlaps newer code must be deleted by the time that code
    // comes, so no two live pieces ever share an address.
    let mut packets = vec![hot_isolate()];
    let mut state = 0x9e37_79b9_u64;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 33) % n
    };
    for k in 0..300u64 {
        let start = 0x10000 + next(0x800);
        let size = 1 + next(0x80);
        packets.push(js(1, 10 + k, 3, 5, Some((start, size))));
    }
    let tp = TraceProcessor::from_bytes(&trace(&packets)).expect("trace");
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM __intrinsic_jit_code"),
        vec![vec![i(300)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*) FROM __intrinsic_jit_code a, __intrinsic_jit_code b \
             WHERE a.id < b.id \
             AND a.start_address < b.start_address + b.size \
             AND b.start_address < a.start_address + a.size \
             AND (a.estimated_delete_ts IS NULL OR a.estimated_delete_ts > b.create_ts)"
        ),
        vec![vec![i(0)]]
    );
    // And every deletion is the time of a load that overlaps it.
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*) FROM __intrinsic_jit_code a \
             WHERE a.estimated_delete_ts IS NOT NULL AND NOT EXISTS ( \
               SELECT 1 FROM __intrinsic_jit_code b \
               WHERE b.create_ts = a.estimated_delete_ts \
               AND a.start_address < b.start_address + b.size \
               AND b.start_address < a.start_address + a.size)"
        ),
        vec![vec![i(0)]]
    );
}
