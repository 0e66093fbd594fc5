//! Storage rows into frozen columnar tables, one per intrinsic table, with
//! Perfetto's column names and types.

use std::sync::Arc;

use crate::storage::Storage;
use crate::storage::args::ArgValue;
use crate::storage::stats::STATS;
use crate::storage::strings::StrId;

use super::table::{Column, Table};

fn ids(n: usize) -> Vec<i64> {
    (0..n as i64).collect()
}

fn opt(v: Option<u32>) -> Option<i64> {
    v.map(i64::from)
}

/// The sorted column of a table, when its values ascend.
fn ascending(table: &Table, col: usize) -> Option<usize> {
    let c = table.columns.get(col)?;
    c.ascends().then_some(col)
}

/// Builds every intrinsic table from the storage.
pub fn build(mut s: Storage) -> Vec<Table> {
    // Strings the tables need beyond the storage's own.
    let stat_names: Vec<StrId> = STATS.iter().map(|d| s.strings.intern(d.0)).collect();
    let severities: Vec<StrId> = STATS
        .iter()
        .map(|d| s.strings.intern(d.2.as_str()))
        .collect();
    let sources: Vec<StrId> = STATS
        .iter()
        .map(|d| s.strings.intern(d.3.as_str()))
        .collect();
    let value_types: Vec<StrId> = s
        .args
        .rows
        .iter()
        .map(|(_, a)| a.value.type_name())
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| s.strings.intern(t))
        .collect();
    let stats_rows = s.stats.rows();
    let strings = Arc::new(std::mem::take(&mut s.strings));
    let table = |name: &'static str, columns: Vec<Column>, len: usize| Table {
        name,
        columns,
        len,
        has_id: true,
        sorted_by: None,
        strings: strings.clone(),
        orders: Default::default(),
    };
    let mut out = Vec::new();

    // The largest tables are given back as soon as their columns exist, so
    // the rows and the columns of all of them are never held at once.
    let sl = std::mem::take(&mut s.slices);
    let mut t = table(
        "__intrinsic_slice",
        vec![
            Column::int("id", ids(sl.len())),
            Column::int("ts", sl.iter().map(|r| r.ts).collect()),
            Column::int("dur", sl.iter().map(|r| r.dur).collect()),
            Column::int(
                "track_id",
                sl.iter().map(|r| i64::from(r.track_id)).collect(),
            ),
            Column::str("category", sl.iter().map(|r| r.category).collect()),
            Column::str("name", sl.iter().map(|r| r.name).collect()),
            Column::int("depth", sl.iter().map(|r| i64::from(r.depth)).collect()),
            Column::opt_int("parent_id", sl.iter().map(|r| opt(r.parent_id)).collect()),
            Column::opt_int("arg_set_id", sl.iter().map(|r| opt(r.arg_set_id)).collect()),
            Column::opt_int("thread_ts", sl.iter().map(|r| r.thread_ts).collect()),
            Column::opt_int("thread_dur", sl.iter().map(|r| r.thread_dur).collect()),
            Column::opt_int(
                "thread_instruction_count",
                sl.iter().map(|r| r.thread_instruction_count).collect(),
            ),
            Column::opt_int(
                "thread_instruction_delta",
                sl.iter().map(|r| r.thread_instruction_delta).collect(),
            ),
        ],
        sl.len(),
    );
    t.sorted_by = ascending(&t, 1);
    out.push(t);
    drop(sl);

    let tr = &s.tracks;
    out.push(table(
        "__intrinsic_track",
        vec![
            Column::int("id", ids(tr.len())),
            Column::str("name", tr.iter().map(|r| r.name).collect()),
            Column::str("type", tr.iter().map(|r| r.classification).collect()),
            Column::opt_int(
                "dimension_arg_set_id",
                tr.iter().map(|r| opt(r.dimension_arg_set_id)).collect(),
            ),
            Column::opt_int("parent_id", tr.iter().map(|r| opt(r.parent_id)).collect()),
            Column::opt_int(
                "source_arg_set_id",
                tr.iter().map(|r| opt(r.source_arg_set_id)).collect(),
            ),
            Column::opt_int("machine_id", tr.iter().map(|r| opt(r.machine_id)).collect()),
            Column::opt_int(
                "track_group_id",
                tr.iter().map(|r| opt(r.track_group_id)).collect(),
            ),
            Column::str("event_type", tr.iter().map(|r| r.event_type).collect()),
            Column::str("counter_unit", tr.iter().map(|r| r.counter_unit).collect()),
            Column::opt_int("utid", tr.iter().map(|r| opt(r.utid)).collect()),
            Column::opt_int("upid", tr.iter().map(|r| opt(r.upid)).collect()),
        ],
        tr.len(),
    ));

    let th = &s.threads;
    out.push(table(
        "__intrinsic_thread",
        vec![
            Column::int("id", ids(th.len())),
            Column::int("tid", th.iter().map(|r| r.tid).collect()),
            Column::str("name", th.iter().map(|r| r.name).collect()),
            Column::opt_int("start_ts", th.iter().map(|r| r.start_ts).collect()),
            Column::opt_int("end_ts", th.iter().map(|r| r.end_ts).collect()),
            Column::opt_int("upid", th.iter().map(|r| opt(r.upid)).collect()),
            Column::opt_int(
                "is_main_thread",
                th.iter().map(|r| r.is_main_thread.map(i64::from)).collect(),
            ),
            Column::int("is_idle", th.iter().map(|r| i64::from(r.is_idle)).collect()),
            Column::opt_int("machine_id", th.iter().map(|r| opt(r.machine_id)).collect()),
            Column::opt_int("arg_set_id", th.iter().map(|r| opt(r.arg_set_id)).collect()),
        ],
        th.len(),
    ));

    let pr = &s.processes;
    out.push(table(
        "__intrinsic_process",
        vec![
            Column::int("id", ids(pr.len())),
            Column::int("pid", pr.iter().map(|r| r.pid).collect()),
            Column::str("name", pr.iter().map(|r| r.name).collect()),
            Column::opt_int("start_ts", pr.iter().map(|r| r.start_ts).collect()),
            Column::opt_int("end_ts", pr.iter().map(|r| r.end_ts).collect()),
            Column::opt_int(
                "parent_upid",
                pr.iter().map(|r| opt(r.parent_upid)).collect(),
            ),
            Column::opt_int("uid", pr.iter().map(|r| r.uid).collect()),
            Column::opt_int(
                "android_appid",
                pr.iter().map(|r| r.android_appid).collect(),
            ),
            Column::opt_int(
                "android_user_id",
                pr.iter().map(|r| r.android_user_id).collect(),
            ),
            Column::str("cmdline", pr.iter().map(|r| r.cmdline).collect()),
            Column::opt_int("arg_set_id", pr.iter().map(|r| opt(r.arg_set_id)).collect()),
            Column::opt_int("machine_id", pr.iter().map(|r| opt(r.machine_id)).collect()),
        ],
        pr.len(),
    ));

    let co = std::mem::take(&mut s.counters);
    let mut t = table(
        "__intrinsic_counter",
        vec![
            Column::int("id", ids(co.len())),
            Column::int("ts", co.iter().map(|r| r.ts).collect()),
            Column::int(
                "track_id",
                co.iter().map(|r| i64::from(r.track_id)).collect(),
            ),
            Column::real("value", co.iter().map(|r| r.value).collect()),
            Column::opt_int("arg_set_id", co.iter().map(|r| opt(r.arg_set_id)).collect()),
        ],
        co.len(),
    );
    t.sorted_by = ascending(&t, 1);
    out.push(t);
    drop(co);

    let st = &s.states;
    out.push(table(
        "__intrinsic_state",
        vec![
            Column::int("id", ids(st.len())),
            Column::int("ts", st.iter().map(|r| r.ts).collect()),
            Column::int("dur", st.iter().map(|r| r.dur).collect()),
            Column::int(
                "track_id",
                st.iter().map(|r| i64::from(r.track_id)).collect(),
            ),
            Column::str("category", st.iter().map(|r| r.category).collect()),
            Column::str("value", st.iter().map(|r| r.value).collect()),
            Column::opt_int("arg_set_id", st.iter().map(|r| opt(r.arg_set_id)).collect()),
        ],
        st.len(),
    ));

    let fl = &s.flows;
    out.push(table(
        "__intrinsic_flow",
        vec![
            Column::int("id", ids(fl.len())),
            Column::int(
                "slice_out",
                fl.iter().map(|r| i64::from(r.slice_out)).collect(),
            ),
            Column::int(
                "slice_in",
                fl.iter().map(|r| i64::from(r.slice_in)).collect(),
            ),
            Column::opt_int("trace_id", fl.iter().map(|r| r.trace_id).collect()),
            Column::opt_int("arg_set_id", fl.iter().map(|r| opt(r.arg_set_id)).collect()),
        ],
        fl.len(),
    ));

    let tc = &s.track_event_callstacks;
    out.push(table(
        "__intrinsic_track_event_callstacks",
        vec![
            Column::int("id", ids(tc.len())),
            Column::int(
                "slice_id",
                tc.iter().map(|r| i64::from(r.slice_id)).collect(),
            ),
            Column::int(
                "track_id",
                tc.iter().map(|r| i64::from(r.track_id)).collect(),
            ),
            Column::opt_int(
                "callsite_id",
                tc.iter().map(|r| opt(r.callsite_id)).collect(),
            ),
            Column::opt_int(
                "end_callsite_id",
                tc.iter().map(|r| opt(r.end_callsite_id)).collect(),
            ),
            Column::opt_real("weight", tc.iter().map(|r| r.weight).collect()),
        ],
        tc.len(),
    ));

    let ar = std::mem::take(&mut s.args.rows);
    let int_of = |v: &ArgValue| match *v {
        ArgValue::Int(x) => Some(x),
        ArgValue::Uint(x) | ArgValue::Pointer(x) => Some(x as i64),
        ArgValue::Bool(b) => Some(i64::from(b)),
        _ => None,
    };
    let str_of = |v: &ArgValue| match *v {
        ArgValue::String(s) | ArgValue::Json(s) => s,
        _ => StrId::NULL,
    };
    let real_of = |v: &ArgValue| match *v {
        ArgValue::Real(x) => Some(x),
        _ => None,
    };
    let mut t = table(
        "__intrinsic_args",
        vec![
            Column::int("id", ids(ar.len())),
            Column::int(
                "arg_set_id",
                ar.iter().map(|(s, _)| i64::from(*s)).collect(),
            ),
            Column::str("flat_key", ar.iter().map(|(_, a)| a.flat_key).collect()),
            Column::str("key", ar.iter().map(|(_, a)| a.key).collect()),
            Column::opt_int(
                "int_value",
                ar.iter().map(|(_, a)| int_of(&a.value)).collect(),
            ),
            Column::str(
                "string_value",
                ar.iter().map(|(_, a)| str_of(&a.value)).collect(),
            ),
            Column::opt_real(
                "real_value",
                ar.iter().map(|(_, a)| real_of(&a.value)).collect(),
            ),
            Column::str("value_type", value_types),
        ],
        ar.len(),
    );
    t.sorted_by = ascending(&t, 1);
    out.push(t);
    drop(ar);

    out.push(table(
        "__intrinsic_stats",
        vec![
            Column::int("id", ids(stats_rows.len())),
            Column::str("name", stats_rows.iter().map(|r| stat_names[r.0]).collect()),
            Column::opt_int("idx", stats_rows.iter().map(|r| r.1).collect()),
            Column::str(
                "severity",
                stats_rows.iter().map(|r| severities[r.0]).collect(),
            ),
            Column::str("source", stats_rows.iter().map(|r| sources[r.0]).collect()),
            Column::int("value", stats_rows.iter().map(|r| r.2).collect()),
            Column::str("description", vec![StrId::NULL; stats_rows.len()]),
            Column::opt_int("machine_id", vec![None; stats_rows.len()]),
            Column::opt_int("trace_id", vec![None; stats_rows.len()]),
        ],
        stats_rows.len(),
    ));

    let md = &s.metadata;
    out.push(table(
        "__intrinsic_metadata",
        vec![
            Column::int("id", ids(md.len())),
            Column::str("name", md.iter().map(|r| r.name).collect()),
            Column::str("key_type", md.iter().map(|r| r.key_type).collect()),
            Column::opt_int("int_value", md.iter().map(|r| r.int_value).collect()),
            Column::str("str_value", md.iter().map(|r| r.str_value).collect()),
            Column::opt_int("machine_id", vec![None; md.len()]),
            Column::opt_int("trace_id", vec![None; md.len()]),
        ],
        md.len(),
    ));

    let cp = &s.cpus;
    out.push(table(
        "__intrinsic_cpu",
        vec![
            Column::int("id", ids(cp.len())),
            Column::opt_int("cpu", cp.iter().map(|r| r.cpu).collect()),
            Column::int("cluster_id", cp.iter().map(|r| r.cluster_id).collect()),
            Column::str("processor", cp.iter().map(|r| r.processor).collect()),
            Column::opt_int("machine_id", vec![None; cp.len()]),
            Column::opt_int("capacity", cp.iter().map(|r| r.capacity).collect()),
            Column::opt_int("arg_set_id", cp.iter().map(|r| opt(r.arg_set_id)).collect()),
        ],
        cp.len(),
    ));
    let cf = &s.cpu_freqs;
    out.push(table(
        "__intrinsic_cpu_freq",
        vec![
            Column::int("id", ids(cf.len())),
            Column::int("ucpu", cf.iter().map(|r| i64::from(r.ucpu)).collect()),
            Column::int("freq", cf.iter().map(|r| r.freq).collect()),
        ],
        cf.len(),
    ));

    let ma = &s.machines;
    out.push(table(
        "__intrinsic_machine",
        vec![
            Column::int("id", ids(ma.len())),
            Column::int("raw_id", ma.iter().map(|r| r.raw_id).collect()),
            Column::str("name", ma.iter().map(|r| r.name).collect()),
            Column::str("sysname", ma.iter().map(|r| r.sysname).collect()),
            Column::str("release", ma.iter().map(|r| r.release).collect()),
            Column::str("version", ma.iter().map(|r| r.version).collect()),
            Column::str("arch", ma.iter().map(|r| r.arch).collect()),
            Column::opt_int("num_cpus", ma.iter().map(|r| r.num_cpus).collect()),
            Column::str(
                "android_build_fingerprint",
                ma.iter().map(|r| r.android_build_fingerprint).collect(),
            ),
            Column::str(
                "android_device_manufacturer",
                ma.iter().map(|r| r.android_device_manufacturer).collect(),
            ),
            Column::opt_int(
                "android_sdk_version",
                ma.iter().map(|r| r.android_sdk_version).collect(),
            ),
            Column::opt_int(
                "system_ram_bytes",
                ma.iter().map(|r| r.system_ram_bytes).collect(),
            ),
            Column::opt_int(
                "system_ram_gb",
                ma.iter()
                    .map(|r| r.system_ram_bytes.map(|b| (b as f64 / 1e9).round() as i64))
                    .collect(),
            ),
        ],
        ma.len(),
    ));

    let cs = &s.clock_snapshots;
    out.push(table(
        "clock_snapshot",
        vec![
            Column::int("id", ids(cs.len())),
            Column::int("ts", cs.iter().map(|r| r.ts).collect()),
            Column::int("clock_id", cs.iter().map(|r| r.clock_id).collect()),
            Column::str("clock_name", cs.iter().map(|r| r.clock_name).collect()),
            Column::int("clock_value", cs.iter().map(|r| r.clock_value).collect()),
            Column::int(
                "snapshot_id",
                cs.iter().map(|r| i64::from(r.snapshot_id)).collect(),
            ),
            Column::opt_int("machine_id", vec![None; cs.len()]),
        ],
        cs.len(),
    ));
    out.extend(super::build_sched::build(&s.sched, &strings));
    out.extend(super::build_profiling::build(&s.profiling, &strings));
    out
}
