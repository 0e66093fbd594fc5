//! What the virtual tables push down through a column's value order (an
//! `ORDER BY` or `GROUP BY` of one column, `=` and `GLOB` on a string
//! column) answers exactly what SQLite answers without it: each query is
//! compared with the same query written so that nothing can be pushed down
//! (`+ 0` and `|| ''` make the column an expression), and the plans say the
//! pushdown was used.

use crate::common;

use common::{packet, rows, trace};
use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// Slices of several names (some sharing a prefix, one empty) and
/// durations (with ties) on three tracks, and a counter track per slice
/// track.
fn sample() -> TraceProcessor {
    let names = ["alpha", "beta", "ab", "", "Alpha", "a[b]c", "gamma"];
    let mut packets = Vec::new();
    for uuid in 1..=3u64 {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(uuid);
            td.set_name(&format!("t{uuid}"));
        }));
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(100 + uuid);
            td.set_name(&format!("c{uuid}"));
            td.begin_counter();
        }));
    }
    let mut ts = 1000u64;
    for i in 0..60u64 {
        let uuid = 1 + i % 3;
        let name = names[(i * 5 % 7) as usize];
        let dur = 10 + (i * 37 % 11) * 3;
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_track_uuid(uuid);
            e.set_type(track_event::Type::SliceBegin);
            e.set_name(name);
        }));
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts + dur);
            let mut e = p.begin_track_event();
            e.set_track_uuid(uuid);
            e.set_type(track_event::Type::SliceEnd);
        }));
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts + 1);
            let mut e = p.begin_track_event();
            e.set_track_uuid(100 + uuid);
            e.set_type(track_event::Type::Counter);
            e.set_double_counter_value((i * 7 % 13) as f64 - 4.5);
        }));
        ts += 100;
    }
    TraceProcessor::from_bytes(&trace(&packets)).expect("load")
}

fn plan(tp: &TraceProcessor, sql: &str) -> String {
    rows(tp, &format!("EXPLAIN QUERY PLAN {sql}"))
        .iter()
        .filter_map(|r| match r.last() {
            Some(Value::Text(t)) => Some(t.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `sql` and `plain` give the same rows, and `sql`'s plan holds `used`
/// and no sort of SQLite's own.
fn same(tp: &TraceProcessor, sql: &str, plain: &str, used: &str) {
    assert_eq!(rows(tp, sql), rows(tp, plain), "{sql}");
    let p = plan(tp, sql);
    assert!(p.contains(used), "{sql}: plan {p}");
    assert!(!p.contains("TEMP B-TREE"), "{sql}: plan {p}");
}

#[test]
fn orders_of_one_column_are_read_through_its_value_order() {
    let tp = sample();
    // Ties on dur keep the rows' order (ascending id) under DESC too, as
    // upstream's stable sort keeps them, so the rows are comparable.
    same(
        &tp,
        "SELECT id, dur FROM slice ORDER BY dur DESC LIMIT 7",
        "SELECT id, dur FROM slice ORDER BY dur + 0 DESC, id ASC LIMIT 7",
        ":d",
    );
    let asc: Vec<Vec<Value>> = rows(&tp, "SELECT dur FROM slice ORDER BY dur");
    let mut want = asc.clone();
    want.sort_by_key(|r| match r[0] {
        Value::Int(v) => v,
        _ => i64::MIN,
    });
    assert_eq!(asc, want);
    assert!(plan(&tp, "SELECT dur FROM slice ORDER BY dur").contains(":a"));
    // A nullable column: NULLs first ascending, last descending.
    let parents = rows(&tp, "SELECT parent_id FROM slice ORDER BY parent_id DESC");
    assert_eq!(parents.last(), Some(&vec![Value::Null]));
}

#[test]
fn group_by_one_column_aggregates_in_its_value_order() {
    let tp = sample();
    same(
        &tp,
        "SELECT track_id, MAX(value), COUNT(*) FROM counter GROUP BY track_id ORDER BY track_id",
        "SELECT track_id, MAX(value), COUNT(*) FROM counter GROUP BY track_id + 0 ORDER BY track_id",
        ":a",
    );
    let grouped = rows(
        &tp,
        "SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name",
    );
    let mut plain = rows(
        &tp,
        "SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name || ''",
    );
    let mut g = grouped.clone();
    let key = |r: &Vec<Value>| format!("{:?}", r[0]);
    g.sort_by_key(key);
    plain.sort_by_key(key);
    assert_eq!(g, plain);
    assert!(!plan(&tp, "SELECT name, COUNT(*) FROM slice GROUP BY name").contains("TEMP B-TREE"));
}

#[test]
fn string_equality_and_glob_visit_only_matching_rows() {
    let tp = sample();
    for pattern in ["a*", "A*", "a?", "*", "a[[]b]*", "", "zzz*", "[ab]*"] {
        let sql = format!("SELECT id, name FROM slice WHERE name GLOB '{pattern}' ORDER BY id");
        let plain =
            format!("SELECT id, name FROM slice WHERE name || '' GLOB '{pattern}' ORDER BY id");
        assert_eq!(rows(&tp, &sql), rows(&tp, &plain), "{pattern}");
        assert!(plan(&tp, &sql).contains(":*"), "{pattern}");
    }
    for name in ["alpha", "", "gamma", "nothing"] {
        let sql = format!("SELECT id FROM slice WHERE name = '{name}' ORDER BY id");
        let plain = format!("SELECT id FROM slice WHERE name || '' = '{name}' ORDER BY id");
        assert_eq!(rows(&tp, &sql), rows(&tp, &plain), "{name}");
        assert!(plan(&tp, &sql).contains(":s"), "{name}");
    }
    // A filter and a GROUP BY of the same column: grouped as it is read.
    same(
        &tp,
        "SELECT name, COUNT(*) AS n FROM slice WHERE name GLOB 'a*' GROUP BY name ORDER BY name",
        "SELECT name, COUNT(*) AS n FROM slice WHERE name || '' GLOB 'a*' GROUP BY name || '' ORDER BY name",
        ":*",
    );
}

#[test]
fn a_pushed_down_filter_in_a_join_matches_the_plain_join() {
    let tp = sample();
    let sql = "SELECT s.id, t.name FROM slice s JOIN track t ON s.track_id = t.id \
               WHERE s.name GLOB '*a*' ORDER BY s.id";
    let plain = "SELECT s.id, t.name FROM slice s JOIN track t ON s.track_id = t.id \
                 WHERE s.name || '' GLOB '*a*' ORDER BY s.id";
    assert_eq!(rows(&tp, sql), rows(&tp, plain));
    assert!(!rows(&tp, sql).is_empty());
}

#[test]
fn strings_order_by_their_bytes_either_way() {
    let tp = sample();
    for dir in ["", " DESC"] {
        let sql = format!("SELECT name FROM slice ORDER BY name{dir}");
        let plain = format!("SELECT name FROM slice ORDER BY name || ''{dir}");
        assert_eq!(rows(&tp, &sql), rows(&tp, &plain), "{dir}");
        assert!(!plan(&tp, &sql).contains("TEMP B-TREE"), "{dir}");
        let grouped = format!(
            "SELECT name, COUNT(*) FROM slice WHERE name GLOB '*a*' GROUP BY name ORDER BY name{dir}"
        );
        let plain = format!(
            "SELECT name, COUNT(*) FROM slice WHERE name || '' GLOB '*a*' GROUP BY name || '' ORDER BY name{dir}"
        );
        assert_eq!(rows(&tp, &grouped), rows(&tp, &plain), "{dir}");
    }
    same(
        &tp,
        "SELECT value FROM counter ORDER BY value DESC",
        "SELECT value FROM counter ORDER BY value + 0 DESC",
        ":d",
    );
}

#[test]
fn integer_equality_on_any_column_visits_one_run_of_its_order() {
    let tp = sample();
    // A nullable column (NULLs match nothing), a plain one, a value no
    // row holds, and a non-integer that SQLite compares itself.
    for (col, v) in [
        ("parent_id", "0"),
        ("parent_id", "3"),
        ("depth", "1"),
        ("track_id", "-5"),
        ("depth", "1.0"),
        ("depth", "'1'"),
    ] {
        let sql = format!("SELECT id FROM slice WHERE {col} = {v} ORDER BY id");
        let plain = format!("SELECT id FROM slice WHERE {col} + 0 = {v} ORDER BY id");
        assert_eq!(rows(&tp, &sql), rows(&tp, &plain), "{col} = {v}");
        assert!(
            plan(&tp, &sql).contains(":e"),
            "{col} = {v}: {}",
            plan(&tp, &sql)
        );
    }
    // A join on a column that is neither an id nor sorted, of many
    // distinct values (11 durations): each probe is a run of the inner
    // table's order, not a scan of it. (A key of one value, as every
    // slice's depth is here, reads the whole table either way, and the
    // planner is told so.)
    let sql = "SELECT a.id, b.id FROM slice a JOIN slice b ON b.dur = a.dur \
               WHERE a.id < 3 ORDER BY a.id, b.id";
    let plain = "SELECT a.id, b.id FROM slice a JOIN slice b ON b.dur + 0 = a.dur \
                 WHERE a.id < 3 ORDER BY a.id, b.id";
    assert_eq!(rows(&tp, sql), rows(&tp, plain));
    assert!(plan(&tp, sql).contains(":e"), "{}", plan(&tp, sql));
}
