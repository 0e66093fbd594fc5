//! `TranslationTable` packets applied as upstream applies them: slice
//! names through the slice-name table, process tracks' names through the
//! process-track-name table, and hashed args (here a Chrome trigger's
//! study hash) followed by the name the table gives them.

use crate::common::{packet, rows, s, trace};
use protozero::Message;
use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// `TracePacket.translation_table`.
const TRANSLATION_TABLE: u32 = 82;
/// `TracePacket.chrome_trigger`.
const CHROME_TRIGGER: u32 = 109;

/// A translation table packet: table `table` of `TranslationTable` with
/// map entries written by `f`.
fn table(table: u32, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        let mut t = p.message().begin_nested(TRANSLATION_TABLE);
        let mut m = t.begin_nested(table);
        f(&mut m);
    })
}

fn string_entry(m: &mut Message<'_>, field: u32, k: &str, v: &str) {
    let mut e = m.begin_nested(field);
    e.append_string(1, k);
    e.append_string(2, v);
}

#[test]
fn slice_names_process_tracks_and_hashed_args_are_translated() {
    let t = trace(&[
        table(4, |m| string_entry(m, 1, "raw_name1", "mapped_name1")),
        table(5, |m| {
            string_entry(m, 1, "raw_counter", "explicitly_renamed")
        }),
        table(6, |m| {
            let mut e = m.begin_nested(1);
            e.append_uint64(1, 10);
            e.append_string(2, "study_name1");
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(10);
            let mut pr = td.begin_process();
            pr.set_pid(5);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(11);
            td.set_parent_uuid(10);
            td.set_name("raw_counter");
            td.begin_counter();
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(100);
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_name("raw_name1");
            e.set_type(track_event::Type::Instant);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(200);
            let mut c = p.message().begin_nested(CHROME_TRIGGER);
            c.append_fixed32(2, 10);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(&tp, "SELECT name FROM slice WHERE ts = 100"),
        vec![vec![s("mapped_name1")]]
    );
    assert_eq!(
        rows(&tp, "SELECT name FROM process_counter_track"),
        vec![vec![s("explicitly_renamed")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT key, int_value, string_value FROM slice JOIN args USING (arg_set_id) \
             WHERE ts = 200 ORDER BY args.id"
        ),
        vec![
            vec![s("chrome_trigger.name_hash"), Value::Int(10), Value::Null],
            vec![s("chrome_trigger.name"), Value::Null, s("study_name1")],
        ]
    );
}

/// A hash the tables already know when its slice is made is translated
/// then, so the args table holds only the translated set; a hash learnt
/// of later is translated at the end.
#[test]
fn a_hash_known_when_its_slice_is_made_leaves_no_untranslated_set() {
    let trigger = |ts: i64, hash: u32| {
        packet(move |p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts as u64);
            let mut c = p.message().begin_nested(CHROME_TRIGGER);
            c.append_fixed32(2, hash);
        })
    };
    let t = trace(&[
        table(6, |m| {
            let mut e = m.begin_nested(1);
            e.append_uint64(1, 10);
            e.append_string(2, "study_name1");
        }),
        trigger(100, 10),
        trigger(200, 30),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT key, int_value, string_value FROM args \
             WHERE key GLOB 'chrome_trigger.*' ORDER BY key, int_value"
        ),
        vec![
            vec![s("chrome_trigger.name"), Value::Null, s("study_name1")],
            vec![s("chrome_trigger.name_hash"), Value::Int(10), Value::Null],
            vec![s("chrome_trigger.name_hash"), Value::Int(30), Value::Null],
        ]
    );
}
