//! Proves the allocation claims with the binary's counting global allocator
//! (`main.rs`; it counts per thread, so parallel tests do not interfere):
//! derived writers append straight into the caller's buffer, and borrowed
//! decoding (including lazy `Repeated` iteration) allocates nothing.

use protozero::{ProtoRead, ProtoWrite, Repeated, SliceWriter};

fn allocations_during(f: impl FnOnce()) -> u64 {
    zerotrace_test_alloc::allocations_during(f).0
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq, Clone, Copy)]
enum Level {
    Info = 0,
    Warn = 1,
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Arg<'a> {
    #[proto(tag = 1)]
    key: &'a str,
    #[proto(tag = 2, sint)]
    value: i64,
}

#[derive(ProtoWrite)]
struct Event<'a> {
    #[proto(tag = 1)]
    name: &'a str,
    #[proto(tag = 2)]
    level: Level,
    #[proto(tag = 3)]
    args: &'a [Arg<'a>],
    #[proto(tag = 4, packed)]
    counters: &'a [u64],
    #[proto(tag = 5, packed, fixed)]
    stamps: [u32; 2],
    #[proto(tag = 6)]
    payload: Option<&'a [u8]>,
}

#[derive(ProtoRead, Debug)]
struct EventView<'a> {
    #[proto(tag = 1)]
    name: &'a str,
    #[proto(tag = 2)]
    level: Level,
    #[proto(tag = 3)]
    args: Repeated<'a, Arg<'a>>,
    #[proto(tag = 4)]
    counters: Repeated<'a, u64>,
    #[proto(tag = 5, fixed)]
    stamps: Repeated<'a, u32>,
    #[proto(tag = 6)]
    payload: Option<&'a [u8]>,
}

#[test]
fn writing_and_borrowed_reading_do_not_allocate() {
    let args = [
        Arg {
            key: "a",
            value: -1,
        },
        Arg {
            key: "b",
            value: 1 << 40,
        },
    ];
    let counters = [1, 2, 3, 1 << 50];
    let event = Event {
        name: "frame",
        level: Level::Warn,
        args: &args,
        counters: &counters,
        stamps: [7, 8],
        payload: Some(b"raw"),
    };
    let mut buf = [0u8; 256];
    let mut writer = SliceWriter::new(&mut buf);
    let n = allocations_during(|| event.write_fields(&mut writer.root()));
    assert_eq!(n, 0, "ProtoWrite allocated");
    let bytes = writer.finish().unwrap();

    let n = allocations_during(|| {
        let view = EventView::decode(bytes).unwrap();
        assert_eq!(view.name, "frame");
        assert_eq!(view.level, Level::Warn);
        let mut keys = 0;
        for arg in &view.args {
            keys += arg.unwrap().key.len();
        }
        assert_eq!(keys, 2);
        assert_eq!(
            view.counters.iter().map(Result::unwrap).sum::<u64>(),
            6 + (1 << 50)
        );
        assert_eq!(view.stamps.iter().map(Result::unwrap).max(), Some(8));
        assert_eq!(view.payload, Some(&b"raw"[..]));
        assert_eq!(view.args.iter().nth(1).unwrap().unwrap(), args[1]);
    });
    assert_eq!(n, 0, "borrowed ProtoRead allocated");
}

#[test]
fn the_counter_sees_allocations() {
    // Guards the test above against a counter that never counts.
    let n = allocations_during(|| drop(std::hint::black_box(vec![1u8; 16])));
    assert_eq!(n, 1);
}
