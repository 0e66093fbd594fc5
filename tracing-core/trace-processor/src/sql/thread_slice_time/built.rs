//! The modules' tables built as columns (served by
//! `perfetto_sql/native.rs`): `thread_slice_time_in_state`,
//! `thread_slice_cpu_time`, `cpu_cycles_per_thread_slice` and
//! `slices.flat_slices`'s `_slice_flattened`, each the operator's rows
//! (`time_in_state.rs`, `cpu_time.rs`, `cycles.rs`, `slices/flatten.rs`)
//! with the thread context `thread_slice` joins in (`context.rs`), column
//! for column what the module's select over `thread_slice` gave, stored
//! as a select's rows are stored. What a row repeats of another table
//! (its slice's name, depth and track; its thread's and process's ids and
//! names; its thread state's state) is not copied: the table keeps per
//! row the slice's row, the thread's and the state's, and those columns
//! read through them (`ColumnData::Lookup`), one list of rows shared by
//! every column it serves.

use std::sync::Arc;

use crate::column_store::strings::{StrId, StringPool};
use crate::column_store::table::{Column, ColumnData, Lookup, Table};
use crate::sql::perfetto_sql::native::Built;

use super::context::{Contexts, Strings, THREAD_COLUMNS};
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

/// `sched_previous_runnable_on_thread`'s columns.
pub(crate) const PREVIOUS_RUNNABLE: &[&str] = super::previous_runnable::COLUMNS;

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

/// Column `col` (by name) of `source` read through `rows`, named `name`:
/// a column of NULLs when there is no such table or column, and, as a
/// select's, when there are no rows.
fn through(
    name: &'static str,
    rows: &Arc<[u32]>,
    source: Option<&Arc<Table>>,
    col: &str,
) -> Column {
    let found = source.and_then(|s| Some((s, s.columns.iter().position(|c| c.name == col)?)));
    match found {
        Some((s, i)) if !rows.is_empty() => Column::lookup(name, rows.clone(), s.clone(), i),
        _ => Column::opt_int(name, vec![None; rows.len()]),
    }
}

/// Per row of a built table, the rows of the tables it reads through: its
/// slice's and its thread's (utid).
#[derive(Default)]
struct Rows {
    slice: Vec<u32>,
    thread: Vec<u32>,
}

impl Rows {
    /// Adds a row of slice row `slice` of thread `utid`.
    fn push(&mut self, slice: usize, utid: i64) {
        self.slice
            .push(u32::try_from(slice).unwrap_or(Lookup::NO_ROW));
        self.thread
            .push(u32::try_from(utid).unwrap_or(Lookup::NO_ROW));
    }

    /// How many rows.
    fn len(&self) -> usize {
        self.slice.len()
    }
}

/// The columns read through each row's slice and thread.
struct Through {
    slice_rows: Arc<[u32]>,
    thread_rows: Arc<[u32]>,
    slice: Option<Arc<Table>>,
    threads: Arc<Table>,
}

impl Through {
    /// Over `rows`, the slices of `t` and their threads' contexts.
    fn new(rows: Rows, t: &Tables, contexts: &Contexts) -> Self {
        Through {
            slice_rows: rows.slice.into(),
            thread_rows: rows.thread.into(),
            slice: t.slice.clone(),
            threads: contexts.thread_table(t),
        }
    }

    /// The slice's column `col`, named `name`.
    fn slice(&self, name: &'static str, col: &str) -> Column {
        through(name, &self.slice_rows, self.slice.as_ref(), col)
    }

    /// The thread context's column `col` (one of [`THREAD_COLUMNS`]).
    fn thread(&self, col: &'static str) -> Column {
        debug_assert!(THREAD_COLUMNS.contains(&col));
        through(col, &self.thread_rows, Some(&self.threads), col)
    }

    /// The slice's id, as the column `id` of a select over `thread_slice`.
    fn id(&self, name: &'static str) -> Column {
        self.slice(name, "id")
    }

    /// The five context columns `thread_slice` adds after `id` (name,
    /// utid, thread_name, upid, process_name).
    fn context(&self) -> [Column; 5] {
        [
            self.slice("name", "name"),
            self.thread("utid"),
            self.thread("thread_name"),
            self.thread("upid"),
            self.thread("process_name"),
        ]
    }
}

/// The built table of `columns` (`len` rows): as they are when every
/// string is an id of the trace's one pool (`strings` shared), else each
/// column read through another table copied, its strings into `strings`'
/// own pool.
fn finish(columns: Vec<Column>, len: usize, mut strings: Strings) -> Built {
    if strings.shared().is_some() {
        return Built {
            columns,
            len,
            strings: strings.finish(),
        };
    }
    let columns = columns
        .into_iter()
        .map(|c| match &c.data {
            ColumnData::Lookup(l) if c.is_text() => {
                let ids = (0..len)
                    .map(|r| {
                        let id = c.str_at(r).unwrap_or(StrId::NULL);
                        strings.id(&l.source.strings, id)
                    })
                    .collect();
                strs(c.name, ids)
            }
            ColumnData::Lookup(_) if c.is_int() => {
                ints(c.name, (0..len).map(|r| c.int_at(r)).collect())
            }
            ColumnData::Lookup(l) => {
                let real = |r: usize| match l.rows.get(r) {
                    Some(&k) if k != Lookup::NO_ROW => match l.source.cell(k as usize, l.col) {
                        crate::column_store::table::Cell::Real(x) => Some(x),
                        _ => None,
                    },
                    _ => None,
                };
                Column::opt_real(c.name, (0..len).map(real).collect())
            }
            _ => c,
        })
        .collect();
    Built {
        columns,
        len,
        strings: strings.finish(),
    }
}

/// `thread_slice_time_in_state`.
pub(crate) fn time_in_state(t: &Tables) -> Built {
    let computed = super::time_in_state::compute(t);
    let contexts = Contexts::read(t);
    let states = t.thread_state.clone();
    let strings = pool(t, states.as_ref());
    let mut rows = Rows::default();
    let (mut state_rows, mut dur) = (Vec::new(), Vec::new());
    for r in computed.chunks_exact(super::time_in_state::COLUMNS.len()) {
        let (&[slice, row, d], Some(_)) = (r, states.as_deref()) else {
            continue;
        };
        let Some(k) = usize::try_from(slice).ok() else {
            continue;
        };
        let Some(utid) = contexts.utid(k) else {
            continue;
        };
        rows.push(k, utid);
        state_rows.push(u32::try_from(row).unwrap_or(Lookup::NO_ROW));
        dur.push(d);
    }
    let len = rows.len();
    let via = Through::new(rows, t, &contexts);
    let state_rows: Arc<[u32]> = state_rows.into();
    let state = |name: &'static str| through(name, &state_rows, states.as_ref(), name);
    let columns = [via.id("id")]
        .into_iter()
        .chain(via.context())
        .chain([
            state("state"),
            state("io_wait"),
            state("blocked_function"),
            ints_set("dur", dur),
        ])
        .collect();
    finish(columns, len, strings)
}

/// `thread_slice_cpu_time`.
pub(crate) fn cpu_time(t: &Tables) -> Built {
    let computed = super::cpu_time::compute(t);
    let contexts = Contexts::read(t);
    let strings = pool(t, None);
    let mut rows = Rows::default();
    let mut cpu = Vec::new();
    for r in computed.chunks_exact(super::cpu_time::COLUMNS.len()) {
        let &[slice, time] = r else {
            continue;
        };
        let Some(k) = usize::try_from(slice).ok() else {
            continue;
        };
        let Some(utid) = contexts.utid(k) else {
            continue;
        };
        rows.push(k, utid);
        cpu.push(time);
    }
    let len = rows.len();
    let via = Through::new(rows, t, &contexts);
    let columns = [via.id("id")]
        .into_iter()
        .chain(via.context())
        .chain([ints_set("cpu_time", cpu)])
        .collect();
    finish(columns, len, strings)
}

/// `cpu_cycles_per_thread_slice`: every thread slice, in id order, with
/// its cycles when its thread's frequency pieces (`pieces`, read from
/// `_cpu_freq_per_thread` by `cycles::read_pieces`) cover the whole
/// slice, else NULL.
pub(crate) fn cycles_of(t: &Tables, pieces: &[super::cycles::Piece]) -> Built {
    let cycles = super::cycles::compute(t, pieces);
    let contexts = Contexts::read(t);
    let strings = pool(t, None);
    let slice_dur = t.slice.as_deref().and_then(|s| column(s, "dur"));
    let slices = t.slice.as_ref().map_or(0, |s| s.len);
    let mut rows = Rows::default();
    let (mut milli, mut mega) = (Vec::new(), Vec::new());
    let mut next = cycles.iter().peekable();
    for row in 0..slices {
        let Some(utid) = contexts.utid(row) else {
            continue;
        };
        let slice = row as i64;
        while next.next_if(|k| k.id < slice).is_some() {}
        let whole = next
            .next_if(|k| k.id == slice)
            .filter(|k| Some(k.dur) == slice_dur.and_then(|d| d.int_at(row)));
        rows.push(row, utid);
        milli.push(whole.map(|k| k.millicycles));
        mega.push(whole.map(|k| k.megacycles));
    }
    let len = rows.len();
    let via = Through::new(rows, t, &contexts);
    let columns = [via.id("id")]
        .into_iter()
        .chain(via.context())
        .chain([ints("millicycles", milli), ints("megacycles", mega)])
        .collect();
    finish(columns, len, strings)
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
    let flat = crate::sql::slices::flatten::rows(&slice);
    let contexts = Contexts::read(t);
    let strings = pool(t, None);
    // The stretches of thread slices alone, their columns kept in place.
    let mut rows = Rows::default();
    let mut keep = 0;
    let (mut ts, mut dur, mut root) = (flat.ts, flat.dur, flat.root);
    for (i, &row) in flat.slice.iter().enumerate() {
        let Some(utid) = contexts.utid(row as usize) else {
            continue;
        };
        rows.slice.push(row);
        rows.thread
            .push(u32::try_from(utid).unwrap_or(Lookup::NO_ROW));
        ts[keep] = ts[i];
        dur[keep] = dur[i];
        root[keep] = root[i];
        keep += 1;
    }
    ts.truncate(keep);
    dur.truncate(keep);
    root.truncate(keep);
    let len = rows.len();
    let via = Through::new(rows, t, &contexts);
    let columns = vec![
        via.id("slice_id"),
        ints_set("ts", ts),
        ints_set("dur", dur),
        via.slice("depth", "depth"),
        via.slice("name", "name"),
        ints_set("root_id", root.into_iter().map(i64::from).collect()),
        via.slice("track_id", "track_id"),
        via.thread("utid"),
        via.thread("tid"),
        via.thread("thread_name"),
        via.thread("upid"),
        via.thread("pid"),
        via.thread("process_name"),
    ];
    finish(columns, len, strings)
}

/// `sched_previous_runnable_on_thread`: each finished `Running` state with
/// its thread's latest runnable and wakeup states before it.
pub(crate) fn previous_runnable(t: &Tables) -> Built {
    let rows = super::previous_runnable::compute(t);
    let len = rows.len();
    Built {
        columns: vec![
            ints_set("id", rows.iter().map(|r| r.id).collect()),
            ints(
                "prev_runnable_id",
                rows.iter().map(|r| r.runnable).collect(),
            ),
            ints(
                "prev_wakeup_runnable_id",
                rows.iter().map(|r| r.wakeup).collect(),
            ),
        ],
        len,
        strings: Arc::default(),
    }
}
