//! What `genuine-producer` writes, shared with the interop tests that check
//! it (they include this file by path: their package must not link the
//! genuine SDK). The shape follows the recorded genuine session in
//! `tracing-core/tests/vectors` (same category and data source names, so recorded
//! configs select it): slices with every kind of debug annotation, nested
//! slices, a named track, a counter track, a flow, instants, one event with
//! a ~100 KB debug annotation, and on a custom data source numbered test
//! packets followed by one ~200 KB packet. The two large ones do not fit in
//! a 4 KiB chunk, so the SDK fragments them across chunks and patches their
//! size fields.

/// The track event category the producer registers and writes.
pub const CATEGORY: &str = "oracle";
/// The custom data source the producer registers.
pub const CUSTOM_DATA_SOURCE: &str = "oracle.custom";
/// Slices `slice_00` .. with the full set of debug annotations.
pub const SLICES: u64 = 10;
/// `instant_marker` events.
pub const INSTANTS: u64 = 3;
/// Values written to the counter track before the final double.
pub const COUNTER_VALUES: [i64; 5] = [0, 10, 20, 30, 40];
/// The final double value of the counter track.
pub const COUNTER_DOUBLE: f64 = 2.5;
/// The global flow id linking `flow_src` to `flow_dst`.
pub const FLOW_ID: u64 = 4242;
/// Numbered packets of the custom data source before the big one.
pub const CUSTOM_PACKETS: u32 = 16;
/// Length of the big event's `blob` debug annotation.
pub const BIG_ANNOTATION_LEN: usize = 100_002;
/// Length of the big custom packet's string.
pub const BIG_PACKET_LEN: usize = 200_002;
/// `seq_value` of the big custom packet.
pub const BIG_PACKET_SEQ: u32 = 1000;
/// Name of the named track.
pub const NAMED_TRACK: &str = "oracle_track";
/// Name of the counter track.
pub const COUNTER_TRACK: &str = "oracle_counter";

/// The `label` annotation of slice `i` (a few hundred bytes, varying).
pub fn label(i: u64) -> String {
    let mut s = String::from("oracle-label-");
    s.push_str(&filler(250 + (i as usize % 3) * 2, i + 7));
    s
}

/// `len` printable bytes, a deterministic function of `seed` (URL-safe
/// base64 alphabet, so any decoder shows them as they are).
pub fn filler(len: usize, seed: u64) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            // xorshift64*
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let v = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
            ALPHABET[(v >> 58) as usize] as char
        })
        .collect()
}

/// The big event's annotation.
pub fn big_annotation() -> String {
    filler(BIG_ANNOTATION_LEN, 0xB16)
}

/// The big custom packet's string.
pub fn big_packet() -> String {
    filler(BIG_PACKET_LEN, 0xB16_B16)
}

/// The `str` of numbered custom packet `i`.
pub fn custom_str(i: u32) -> String {
    format!("custom_{i:02}")
}

/// One track event as the trace shows it once interned names are resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// TrackEvent.Type: 1 begin, 2 end, 3 instant, 4 counter.
    pub kind: u64,
    /// The event's name (empty for ends and counters).
    pub name: String,
    /// The track's name when not the thread's default track.
    pub track: Option<String>,
    /// Debug annotations, name and value, in order.
    pub args: Vec<(String, Arg)>,
    /// Counter value.
    pub counter: Option<Arg>,
    /// Flow ids this event starts / terminates.
    pub flows: Vec<u64>,
    /// Flow ids this event terminates.
    pub terminating_flows: Vec<u64>,
}

/// A debug annotation or counter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// bool_value.
    Bool(bool),
    /// uint_value.
    Uint(u64),
    /// int_value.
    Int(i64),
    /// double_value.
    Double(f64),
    /// string_value.
    Str(String),
}

impl Event {
    fn new(kind: u64, name: &str) -> Event {
        Event {
            kind,
            name: name.into(),
            track: None,
            args: Vec::new(),
            counter: None,
            flows: Vec::new(),
            terminating_flows: Vec::new(),
        }
    }
}

/// Every track event the producer writes, in order.
pub fn expected_events() -> Vec<Event> {
    let mut v = Vec::new();
    for i in 0..SLICES {
        let mut b = Event::new(1, &format!("slice_{i:02}"));
        b.args = vec![
            ("idx".into(), Arg::Int(i as i64)),
            ("uidx".into(), Arg::Uint(i)),
            ("label".into(), Arg::Str(label(i))),
            ("even".into(), Arg::Bool(i % 2 == 0)),
            ("ratio".into(), Arg::Double(i as f64 / 4.0)),
        ];
        v.push(b);
        v.push(Event::new(2, ""));
    }
    v.push(Event::new(1, "outer"));
    v.push(Event::new(1, "inner"));
    v.push(Event::new(2, ""));
    v.push(Event::new(2, ""));
    let mut b = Event::new(1, "on_named_track");
    b.track = Some(NAMED_TRACK.into());
    v.push(b);
    let mut e = Event::new(2, "");
    e.track = Some(NAMED_TRACK.into());
    v.push(e);
    for c in COUNTER_VALUES {
        let mut e = Event::new(4, "");
        e.track = Some(COUNTER_TRACK.into());
        e.counter = Some(Arg::Int(c));
        v.push(e);
    }
    let mut e = Event::new(4, "");
    e.track = Some(COUNTER_TRACK.into());
    e.counter = Some(Arg::Double(COUNTER_DOUBLE));
    v.push(e);
    let mut b = Event::new(1, "flow_src");
    b.flows = vec![FLOW_ID];
    v.push(b);
    v.push(Event::new(2, ""));
    let mut i = Event::new(3, "flow_dst");
    i.terminating_flows = vec![FLOW_ID];
    v.push(i);
    for n in 0..INSTANTS {
        let mut e = Event::new(3, "instant_marker");
        e.args = vec![("n".into(), Arg::Int(n as i64))];
        v.push(e);
    }
    let mut big = Event::new(3, "big_event");
    big.args = vec![("blob".into(), Arg::Str(big_annotation()))];
    v.push(big);
    v.push(Event::new(3, "done_marker"));
    v
}

/// One packet of the custom data source (its `for_testing` TestEvent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestPacket {
    /// TestEvent.str.
    pub str: String,
    /// TestEvent.seq_value.
    pub seq_value: u32,
    /// TestEvent.counter.
    pub counter: Option<u64>,
    /// TestEvent.is_last.
    pub is_last: bool,
}

/// Every custom packet the producer writes, in order.
pub fn expected_test_packets() -> Vec<TestPacket> {
    let mut v: Vec<TestPacket> = (0..CUSTOM_PACKETS)
        .map(|i| TestPacket {
            str: custom_str(i),
            seq_value: i,
            counter: Some(u64::from(i) * u64::from(i)),
            is_last: false,
        })
        .collect();
    v.push(TestPacket {
        str: big_packet(),
        seq_value: BIG_PACKET_SEQ,
        counter: None,
        is_last: true,
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_is_deterministic_and_has_its_big_items() {
        assert_eq!(filler(64, 3), filler(64, 3));
        assert_ne!(filler(64, 3), filler(64, 4));
        let events = expected_events();
        assert_eq!(events, expected_events());
        let big = events.iter().find(|e| e.name == "big_event").unwrap();
        assert!(matches!(&big.args[0].1, Arg::Str(s) if s.len() == BIG_ANNOTATION_LEN));
        let packets = expected_test_packets();
        assert_eq!(packets.len(), CUSTOM_PACKETS as usize + 1);
        assert_eq!(packets.last().unwrap().str.len(), BIG_PACKET_LEN);
        assert!(packets.last().unwrap().is_last);
    }
}
