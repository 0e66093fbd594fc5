//! Safe code that leaks children and switches compaction between messages
//! must never reach undefined behaviour. A child leaked with `mem::forget`
//! leaves its length slot open; if that slot is a speculative 1-byte one and
//! compaction is then switched off, the next nested message used to push a
//! 4-byte slot on top of it, breaking the invariant that open short slots are
//! the innermost ones: the stale short slot outlived the slice it lay in, and
//! its later widening moved bytes across two unrelated heap blocks.
//!
//! The regression tests replay that sequence; the property test mixes leaked
//! children, compaction toggles, slice switches and patches on every writer
//! kind (heap, fixed slice, discard, random slices, eagerly released slices
//! with patches). Run under Miri (Stacked and Tree Borrows) by `cargo xtask
//! miri` and under valgrind in CI; natively the stream writer's debug
//! assertions check the slot invariant on every push.

use crate::common;

use common::delegates::EagerRelease;
use common::{RandomSlices, slice_max};
use proptest::prelude::*;
use protozero::{Delegate, HeapBuffer, HeapWriter, Message, NullWriter, SliceWriter, Writer};

/// The sequence from the report: a short child leaked, compaction switched
/// off (both switches), then a nested message whose body leaves the slice.
#[test]
fn leaked_short_child_then_compaction_off_across_slices() {
    for switch in [Switch::Compaction, Switch::Speculation] {
        let mut w = HeapWriter::with_delegate(HeapBuffer::with_slice_sizes(64, 64));
        {
            let mut root = w.root();
            root.append_uint32(1, 7);
            let child = root.begin_nested(2);
            core::mem::forget(child);
        }
        switch.apply(&mut w, false);
        {
            let mut root = w.root();
            let mut m = root.begin_nested(3);
            m.append_bytes(4, &[0xAB; 300]);
            m.append_uint32(5, 9);
        }
        // Compaction back on: more messages over the same stack.
        switch.apply(&mut w, true);
        {
            let mut root = w.root();
            let mut m = root.begin_nested(6);
            m.append_string(7, "after");
        }
        assert_eq!(w.error(), None, "{switch:?}");
        let bytes = w.finish().expect("heap");
        // Field 1 and the leaked child's tag come first, intact.
        assert_eq!(&bytes[..3], &[0x08, 7, 0x12], "{switch:?}");
    }
}

/// The same within one slice: it used to trip "short-slot headroom used up".
#[test]
fn leaked_short_child_then_compaction_off_in_one_slice() {
    for switch in [Switch::Compaction, Switch::Speculation] {
        let mut buf = vec![0u8; 4096];
        let mut w = SliceWriter::new(&mut buf);
        {
            let mut root = w.root();
            let child = root.begin_nested(1);
            core::mem::forget(child);
        }
        switch.apply(&mut w, false);
        {
            let mut root = w.root();
            let mut m = root.begin_nested(2);
            for i in 0..100 {
                m.append_uint32(3, 1000 + i);
            }
        }
        assert_eq!(w.error(), None, "{switch:?}");
        let n = w.finish().expect("fits").len();
        assert!(n > 300, "{switch:?}: {n} bytes");
    }
}

/// Which of the two compaction switches a test flips.
#[derive(Debug, Clone, Copy)]
enum Switch {
    Compaction,
    Speculation,
}

impl Switch {
    fn apply<D: Delegate>(self, w: &mut Writer<D>, on: bool) {
        match self {
            Switch::Compaction => w.set_compaction(on),
            Switch::Speculation => w.set_speculative_compaction(on),
        }
    }
}

/// One step of a writing program, applied inside a root message.
#[derive(Debug, Clone)]
enum Op {
    /// Opens a nested child and runs the steps up to its `Close`/`Leak` inside it.
    Open(u32),
    /// Ends the innermost child normally.
    Close,
    /// Ends the innermost child with `mem::forget`.
    Leak,
    /// Appends a bytes field of this length.
    Bytes(usize),
    /// Appends a varint field.
    Varint(u64),
}

/// Between two root messages: a writer-level switch.
#[derive(Debug, Clone)]
enum Between {
    Nothing,
    Compaction(bool),
    Speculation(bool),
}

fn op() -> impl Strategy<Value = Op> {
    let bytes_max = if cfg!(miri) { 200 } else { 600 };
    prop_oneof![
        3 => (1u32..20).prop_map(Op::Open),
        2 => Just(Op::Close),
        1 => Just(Op::Leak),
        2 => (0usize..bytes_max).prop_map(Op::Bytes),
        2 => any::<u64>().prop_map(Op::Varint),
    ]
}

fn between() -> impl Strategy<Value = Between> {
    prop_oneof![
        Just(Between::Nothing),
        any::<bool>().prop_map(Between::Compaction),
        any::<bool>().prop_map(Between::Speculation),
    ]
}

fn program() -> impl Strategy<Value = Vec<(Vec<Op>, Between)>> {
    let (ops, roots) = if cfg!(miri) { (12, 4) } else { (40, 8) };
    prop::collection::vec((prop::collection::vec(op(), 0..ops), between()), 1..roots)
}

/// Runs `ops` inside `msg` until a `Close`/`Leak` ends it (returned) or the
/// steps run out (`None`).
fn run(msg: &mut Message<'_>, ops: &mut std::slice::Iter<'_, Op>, depth: usize) -> Option<bool> {
    while let Some(op) = ops.next() {
        match *op {
            Op::Open(tag) if depth < 24 => {
                let mut child = msg.begin_nested(tag);
                match run(&mut child, ops, depth + 1) {
                    Some(true) => core::mem::forget(child),
                    Some(false) => drop(child),
                    None => {
                        drop(child);
                        return None;
                    }
                }
            }
            Op::Open(_) => {}
            Op::Close => return Some(false),
            Op::Leak => return Some(true),
            Op::Bytes(n) => msg.append_bytes(1, &vec![0x5A; n]),
            Op::Varint(v) => msg.append_uint64(2, v),
        }
    }
    None
}

/// Applies the whole program to `w`.
fn apply<D: Delegate>(w: &mut Writer<D>, program: &[(Vec<Op>, Between)]) {
    for (ops, between) in program {
        {
            let mut root = w.root();
            let mut it = ops.iter();
            // A `Close`/`Leak` at root level just ends this root early.
            let _ = run(&mut root, &mut it, 0);
        }
        match *between {
            Between::Nothing => {}
            Between::Compaction(on) => w.set_compaction(on),
            Between::Speculation(on) => w.set_speculative_compaction(on),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 256 }, ..ProptestConfig::default() })]

    /// Every writer kind survives any mix of leaks, toggles, slice switches
    /// and patches: no panic, no write into memory a delegate took back, and
    /// output that never exceeds what was counted.
    #[test]
    fn leaks_and_toggles_on_every_writer(program in program(), seed in any::<u64>(), max in slice_max()) {
        let mut heap = HeapWriter::with_delegate(HeapBuffer::with_slice_sizes(max.min(4096), 4096));
        apply(&mut heap, &program);
        if heap.error().is_none() {
            prop_assert_eq!(heap.to_vec().len(), heap.written());
        }

        let mut buf = vec![0u8; if cfg!(miri) { 2048 } else { 1 << 15 }];
        let mut slice = SliceWriter::new(&mut buf);
        apply(&mut slice, &program);
        let _ = slice.finish();

        let mut null = NullWriter::new();
        apply(&mut null, &program);

        let mut random = Writer::with_delegate(RandomSlices::new(seed, max));
        apply(&mut random, &program);
        let stitched = random.delegate().stitch(random.stream().cursor());
        prop_assert_eq!(stitched.len(), random.written());

        let mut eager = Writer::with_delegate(EagerRelease::new(seed, max));
        apply(&mut eager, &program);
        // Released slices were never written again (leaked slots may leave
        // patches unfilled, so only the graveyard is checked).
        eager.delegate().check_graveyard();
    }
}
