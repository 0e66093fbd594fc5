//! The modules' tables built as columns (served by
//! `perfetto_sql/native.rs`): `thread_slice_time_in_state`,
//! `thread_slice_cpu_time`, `cpu_cycles_per_thread_slice` and
//! `slices.flat_slices`'s `_slice_flattened`, each the operator's rows
//! (`time_in_state.rs`, `cpu_time.rs`, `cycles.rs`, `slices/flatten.rs`)
//! with the thread context `thread_slice` joins in (`context.rs`), column
//! for column what the module's select over `thread_slice` gave, stored
//! as a select's rows are stored.

use std::sync::Arc;

use crate::sql::perfetto_sql::native::Built;
use crate::sql::perfetto_sql::nested::NestedDb;
use crate::sql::table::{Column, Table};
use crate::storage::strings::{StrId, StringPool};

use super::context::{Context, Contexts, Strings};
use super::inputs::{Tables, column};

/// `thread_slice_time_in_state`'s columns.
pub(crate) const TIME_IN_STATE: &[&str] = &[
    "id",
    "name",
    "utid",
    "thread_name",
    "upid",
    "process_name",
    "state",
    "io_wait",
    "blocked_function",
    "dur",
];

/// `thread_slice_cpu_time`'s columns.
pub(crate) const CPU_TIME: &[&str] = &[
    "id",
    "name",
    "utid",
    "thread_name",
    "upid",
    "process_name",
    "cpu_time",
];

/// `cpu_cycles_per_thread_slice`'s columns.
pub(crate) const CYCLES: &[&str] = &[
    "id",
    "name",
    "utid",
    "thread_name",
    "upid",
    "process_name",
    "millicycles",
    "megacycles",
];

/// `_slice_flattened`'s columns.
pub(crate) const FLATTENED: &[&str] = &[
    "slice_id",
    "ts",
    "dur",
    "depth",
    "name",
    "root_id",
    "track_id",
    "utid",
    "tid",
    "thread_name",
    "upid",
    "pid",
    "process_name",
];

/// A column of integers as a select's would be stored: none at all reads
/// as a column of NULLs, NULLs make it nullable.
fn ints(name: &'static str, v: Vec<Option<i64>>) -> Column {
    if !v.is_empty() && v.iter().all(Option::is_some) {
        Column::int(name, v.into_iter().flatten().collect())
    } else {
        Column::opt_int(name, v)
    }
}

/// A column of integers none of which is NULL, as a select's would be
/// stored (none at all reads as a column of NULLs).
fn ints_set(name: &'static str, v: Vec<i64>) -> Column {
    if v.is_empty() {
        Column::opt_int(name, Vec::new())
    } else {
        Column::int(name, v)
    }
}

/// A column of strings as a select's would be stored: one of NULLs only
/// is a column of NULL integers.
fn strs(name: &'static str, v: Vec<StrId>) -> Column {
    if v.iter().all(|s| s.is_null()) {
        Column::opt_int(name, vec![None; v.len()])
    } else {
        Column::str(name, v)
    }
}

/// The string pool of the tables a built table reads.
fn pool(t: &Tables, more: Option<&Arc<Table>>) -> Strings {
    let sources: Vec<&Arc<StringPool>> = [&t.slice, &t.thread, &t.process]
        .into_iter()
        .flatten()
        .chain(more)
        .map(|t| &t.strings)
        .collect();
    Strings::over(&sources)
}

/// The context columns `thread_slice` adds (name, utid, thread_name,
/// upid, process_name), filled row by row.
struct ContextColumns {
    /// The pools of the slice, thread and process tables.
    pools: [Option<Arc<StringPool>>; 3],
    name: Vec<StrId>,
    utid: Vec<i64>,
    thread_name: Vec<StrId>,
    upid: Vec<Option<i64>>,
    process_name: Vec<StrId>,
}

impl ContextColumns {
    /// Empty columns of the context of `t`'s slices.
    fn new(t: &Tables) -> Self {
        let pool = |table: &Option<Arc<Table>>| table.as_ref().map(|t| t.strings.clone());
        ContextColumns {
            pools: [pool(&t.slice), pool(&t.thread), pool(&t.process)],
            name: Vec::new(),
            utid: Vec::new(),
            thread_name: Vec::new(),
            upid: Vec::new(),
            process_name: Vec::new(),
        }
    }

    /// Adds a slice's context `c`.
    fn push(&mut self, strings: &mut Strings, c: Context) {
        let [slice, thread, process] = &self.pools;
        let mut id = |pool: &Option<Arc<StringPool>>, s: StrId| {
            pool.as_ref().map_or(StrId::NULL, |p| strings.id(p, s))
        };
        let (name, thread_name, process_name) = (
            id(slice, c.name),
            id(thread, c.thread_name),
            id(process, c.process_name),
        );
        self.name.push(name);
        self.utid.push(c.utid);
        self.thread_name.push(thread_name);
        self.upid.push(c.upid);
        self.process_name.push(process_name);
    }

    /// The five context columns, in upstream's order after `id`.
    fn columns(self) -> [Column; 5] {
        [
            strs("name", self.name),
            ints_set("utid", self.utid),
            strs("thread_name", self.thread_name),
            ints("upid", self.upid),
            strs("process_name", self.process_name),
        ]
    }
}

/// `thread_slice_time_in_state`.
pub(crate) fn time_in_state(t: &Tables) -> Built {
    let rows = super::time_in_state::compute(t);
    let contexts = Contexts::read(t);
    let states = t.thread_state.clone();
    let mut strings = pool(t, states.as_ref());
    let state_col = |name: &str| {
        states
            .as_ref()
            .and_then(|s| s.columns.iter().position(|c| c.name == name))
    };
    let (state_i, blocked_i) = (state_col("state"), state_col("blocked_function"));
    let io_wait = states.as_deref().and_then(|s| column(s, "io_wait"));
    let mut id = Vec::new();
    let mut ctx = ContextColumns::new(t);
    let (mut state, mut io, mut blocked, mut dur) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in rows.chunks_exact(super::time_in_state::COLUMNS.len()) {
        let (&[slice, row, d], Some(s)) = (r, states.as_deref()) else {
            continue;
        };
        let Some(c) = usize::try_from(slice).ok().and_then(|k| contexts.get(k)) else {
            continue;
        };
        let row = usize::try_from(row).unwrap_or(usize::MAX);
        let text = |i: Option<usize>| i.and_then(|i| s.str_id(row, i)).unwrap_or(StrId::NULL);
        id.push(slice);
        ctx.push(&mut strings, c);
        state.push(strings.id(&s.strings, text(state_i)));
        io.push(io_wait.and_then(|c| c.int_at(row)));
        blocked.push(strings.id(&s.strings, text(blocked_i)));
        dur.push(d);
    }
    let len = id.len();
    Built {
        columns: [ints_set("id", id)]
            .into_iter()
            .chain(ctx.columns())
            .chain([
                strs("state", state),
                ints("io_wait", io),
                strs("blocked_function", blocked),
                ints_set("dur", dur),
            ])
            .collect(),
        len,
        strings: strings.finish(),
    }
}

/// `thread_slice_cpu_time`.
pub(crate) fn cpu_time(t: &Tables) -> Built {
    let rows = super::cpu_time::compute(t);
    let contexts = Contexts::read(t);
    let mut strings = pool(t, None);
    let mut id = Vec::new();
    let mut ctx = ContextColumns::new(t);
    let mut cpu = Vec::new();
    for r in rows.chunks_exact(super::cpu_time::COLUMNS.len()) {
        let &[slice, time] = r else {
            continue;
        };
        let Some(c) = usize::try_from(slice).ok().and_then(|k| contexts.get(k)) else {
            continue;
        };
        id.push(slice);
        ctx.push(&mut strings, c);
        cpu.push(time);
    }
    let len = id.len();
    Built {
        columns: [ints_set("id", id)]
            .into_iter()
            .chain(ctx.columns())
            .chain([ints_set("cpu_time", cpu)])
            .collect(),
        len,
        strings: strings.finish(),
    }
}

/// `cpu_cycles_per_thread_slice`: every thread slice, in id order, with
/// its cycles when its thread's frequency pieces (`_cpu_freq_per_thread`,
/// read on `db`) cover the whole slice, else NULL.
pub(crate) fn cycles(t: &Tables, db: &NestedDb) -> rusqlite::Result<Built> {
    let pieces = super::cycles::read_pieces(db)?;
    let cycles = super::cycles::compute(t, &pieces);
    let contexts = Contexts::read(t);
    let mut strings = pool(t, None);
    let slice_dur = t.slice.as_deref().and_then(|s| column(s, "dur"));
    let slices = t.slice.as_ref().map_or(0, |s| s.len);
    let mut id = Vec::new();
    let mut ctx = ContextColumns::new(t);
    let (mut milli, mut mega) = (Vec::new(), Vec::new());
    let mut next = cycles.iter().peekable();
    for row in 0..slices {
        let Some(c) = contexts.get(row) else {
            continue;
        };
        let slice = row as i64;
        while next.next_if(|k| k.id < slice).is_some() {}
        let whole = next
            .next_if(|k| k.id == slice)
            .filter(|k| Some(k.dur) == slice_dur.and_then(|d| d.int_at(row)));
        id.push(slice);
        ctx.push(&mut strings, c);
        milli.push(whole.map(|k| k.millicycles));
        mega.push(whole.map(|k| k.megacycles));
    }
    let len = id.len();
    Ok(Built {
        columns: [ints_set("id", id)]
            .into_iter()
            .chain(ctx.columns())
            .chain([ints("millicycles", milli), ints("megacycles", mega)])
            .collect(),
        len,
        strings: strings.finish(),
    })
}

/// `_slice_flattened`: the flattened stretches of thread slices, by
/// root then start.
pub(crate) fn flattened(t: &Tables) -> Built {
    let Some(slice) = t.slice.clone() else {
        return Built {
            columns: FLATTENED
                .iter()
                .map(|n| Column::opt_int(n, Vec::new()))
                .collect(),
            len: 0,
            strings: Arc::default(),
        };
    };
    let rows = crate::sql::slices::flatten::compute(&slice);
    let contexts = Contexts::read(t);
    let mut strings = pool(t, None);
    let (depth_col, track_col) = (column(&slice, "depth"), column(&slice, "track_id"));
    let mut set: [Vec<i64>; 4] = Default::default();
    let mut opt: [Vec<Option<i64>>; 4] = Default::default();
    let mut ctx = ContextColumns::new(t);
    for r in rows.chunks_exact(crate::sql::slices::flatten::COLUMNS.len()) {
        let &[slice_id, ts, dur, root] = r else {
            continue;
        };
        let Some(row) = usize::try_from(slice_id).ok() else {
            continue;
        };
        let Some(c) = contexts.get(row) else {
            continue;
        };
        let [s_id, s_ts, s_dur, s_root] = &mut set;
        let [s_depth, s_track, s_tid, s_pid] = &mut opt;
        s_id.push(slice_id);
        s_ts.push(ts);
        s_dur.push(dur);
        s_root.push(root);
        s_depth.push(depth_col.and_then(|d| d.int_at(row)));
        s_track.push(track_col.and_then(|d| d.int_at(row)));
        s_tid.push(c.tid);
        s_pid.push(c.pid);
        ctx.push(&mut strings, c);
    }
    let [s_id, s_ts, s_dur, s_root] = set;
    let [s_depth, s_track, s_tid, s_pid] = opt;
    let len = s_id.len();
    Built {
        columns: vec![
            ints_set("slice_id", s_id),
            ints_set("ts", s_ts),
            ints_set("dur", s_dur),
            ints("depth", s_depth),
            strs("name", ctx.name),
            ints_set("root_id", s_root),
            ints("track_id", s_track),
            ints_set("utid", ctx.utid),
            ints("tid", s_tid),
            strs("thread_name", ctx.thread_name),
            ints("upid", ctx.upid),
            ints("pid", s_pid),
            strs("process_name", ctx.process_name),
        ],
        len,
        strings: strings.finish(),
    }
}
