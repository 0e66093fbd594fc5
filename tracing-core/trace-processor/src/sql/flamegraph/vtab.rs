//! The `__intrinsic_flamegraph` SQLite module: `CREATE VIRTUAL TABLE fg
//! USING __intrinsic_flamegraph((query))` loads the query's rows once
//! (`source.rs`); each `SELECT ... FROM fg(__intrinsic_flamegraph_config(
//! ...))` builds and lays out the flamegraph that config asks for
//! (`build.rs`, `layout.rs`). `WHERE __intrinsic_flamegraph_find(_tree_id,
//! 'SUPER_ROOT')` selects instead the one synthetic row above every root
//! (depth 0, the sum of `value`): the module overloads that function so
//! SQLite hands the constraint to `best_index`, which rusqlite's module
//! builder does not offer, so the module is rusqlite's with
//! `xFindFunction` added.

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Arc, Mutex, OnceLock};

use rusqlite::ffi;
use rusqlite::types::{Null, Value, ValueRef};
use rusqlite::vtab::{
    Context, CreateVTab, Filters, IndexConstraintOp, IndexInfo, Module, VTab, VTabConnection,
    VTabCursor, VTabKind, read_only_module,
};

use super::build::{Built, OutColumn, build, resolve};
use super::config;
use super::error::FlamegraphError;
use super::layout::{self, Layout};
use super::source::{Cell, NONE, Source};
use crate::sql::perfetto_sql::nested::NestedDb;

/// The function whose constraint selects the super-root.
pub(crate) const FIND: &str = "__intrinsic_flamegraph_find";

/// The constraint operator `xFindFunction` answers for [`FIND`] (past
/// `SQLITE_INDEX_CONSTRAINT_FUNCTION`).
const FIND_OP: u8 = 151;

// Schema columns.
const CONFIG: c_int = 0;
const TREE_ID: c_int = 1;
const TREE_PARENT_ID: c_int = 2;
const DEPTH: c_int = 3;
const NAME: c_int = 4;
const SELF_VALUE: c_int = 5;
const CUMULATIVE_VALUE: c_int = 6;
const PARENT_CUMULATIVE_VALUE: c_int = 7;
const X_START: c_int = 8;
const X_END: c_int = 9;
const PROPERTIES: usize = 10;

/// `best_index`'s plan that selects the super-root.
const SUPER_ROOT_PLAN: c_int = 1;

/// The sources of the flamegraph tables created on a connection, by
/// `schema.table`, so that a reconnect finds what the create loaded.
#[derive(Debug)]
pub struct Registry {
    /// The connection the tables live on.
    db: NestedDb,
    sources: Mutex<HashMap<String, Arc<Source>>>,
}

impl Registry {
    /// The registry of the tables of the connection `db` is the handle of.
    pub(crate) fn new(db: NestedDb) -> Self {
        Registry {
            db,
            sources: Mutex::new(HashMap::new()),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, Arc<Source>>) -> R) -> R {
        let mut guard = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }
}

/// A flamegraph table.
#[repr(C)]
pub struct FlamegraphTab {
    /// SQLite's part; must be first.
    base: ffi::sqlite3_vtab,
    source: Arc<Source>,
    key: String,
    registry: Arc<Registry>,
}

fn module_error(msg: &str) -> rusqlite::Error {
    rusqlite::Error::ModuleError(msg.to_owned())
}

/// (registry key, source query) of a create's or connect's arguments.
fn arguments(args: &[&[u8]]) -> rusqlite::Result<(String, String)> {
    let text = |i: usize| {
        args.get(i)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .unwrap_or_default()
    };
    if args.len() != 4 {
        return Err(module_error("flamegraph: wrong number of arguments"));
    }
    Ok((format!("{}.{}", text(1), text(2)), text(3)))
}

/// Runs `SELECT * FROM query` on the connection creating the table (on
/// its raw handle: a rusqlite `Connection` over it would drop the
/// connection's authorizer when dropped) and loads its rows.
fn load(db: NestedDb, query: &str) -> rusqlite::Result<Source> {
    let rows = db
        .query(&format!("SELECT * FROM {query}"), &[], usize::MAX / 2)
        .map_err(|e| module_error(&e))?;
    let mut columns: Vec<Vec<Cell>> = vec![Vec::with_capacity(rows.rows.len()); rows.columns.len()];
    for row in rows.rows {
        for (col, v) in columns.iter_mut().zip(row) {
            col.push(match v {
                Value::Null => Cell::Null,
                Value::Integer(v) => Cell::Int(v),
                Value::Real(v) => Cell::Real(v),
                Value::Text(t) => Cell::Text(t),
                Value::Blob(_) => Cell::Blob,
            });
        }
    }
    Ok(Source::new(rows.columns, columns)?)
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn schema(source: &Source) -> String {
    let mut s = String::from(
        "CREATE TABLE x(in_config HIDDEN, _tree_id BIGINT, _tree_parent_id BIGINT, \
         depth BIGINT, name TEXT, self_value, cumulative_value, parent_cumulative_value, \
         x_start, x_end",
    );
    for p in &source.properties {
        s.push_str(", ");
        s.push_str(&quote(p));
    }
    for c in &source.candidates {
        s.push_str(&format!(
            ", {}, {}",
            quote(&format!("self_{c}")),
            quote(&format!("cumulative_{c}"))
        ));
    }
    s.push(')');
    s
}

impl FlamegraphTab {
    fn open_with(
        _db: &mut VTabConnection,
        registry: Option<&Arc<Registry>>,
        args: &[&[u8]],
        reuse: bool,
    ) -> rusqlite::Result<(String, Self)> {
        let registry = registry
            .cloned()
            .ok_or_else(|| module_error("flamegraph: registry missing"))?;
        let (key, query) = arguments(args)?;
        let known = if reuse {
            registry.with(|m| m.get(&key).cloned())
        } else {
            None
        };
        let source = match known {
            Some(s) => s,
            None => {
                let source = Arc::new(load(registry.db, &query)?);
                registry.with(|m| m.insert(key.clone(), source.clone()));
                source
            }
        };
        Ok((
            schema(&source),
            FlamegraphTab {
                base: ffi::sqlite3_vtab::default(),
                source,
                key,
                registry,
            },
        ))
    }
}

// SAFETY: `FlamegraphTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for FlamegraphTab {
    type Aux = Arc<Registry>;
    type Cursor = FlamegraphCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Arc<Registry>>,
        args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        Self::open_with(db, aux, args, true)
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let (mut config, mut root) = (None, None);
        for (i, c) in info.constraints().enumerate() {
            if !c.is_usable() {
                continue;
            }
            match (c.column(), c.operator()) {
                (CONFIG, IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ) => config = Some(i),
                (TREE_ID, IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_FUNCTION(FIND_OP)) => {
                    root = Some(i)
                }
                _ => {}
            }
        }
        let Some(config) = config else {
            // Not a plan: the config argument is required.
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(ffi::SQLITE_CONSTRAINT),
                None,
            ));
        };
        let mut u = info.constraint_usage(config);
        u.set_argv_index(1);
        u.set_omit(true);
        info.set_idx_num(0);
        if let Some(r) = root {
            let mut u = info.constraint_usage(r);
            u.set_argv_index(2);
            u.set_omit(true);
            info.set_idx_num(SUPER_ROOT_PLAN);
        }
        info.set_estimated_cost(1000.0);
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<FlamegraphCursor> {
        Ok(FlamegraphCursor {
            base: ffi::sqlite3_vtab_cursor::default(),
            source: self.source.clone(),
            mode: Mode::Empty,
            pos: 0,
        })
    }
}

impl CreateVTab<'_> for FlamegraphTab {
    const KIND: VTabKind = VTabKind::Default;

    fn create(
        db: &mut VTabConnection,
        aux: Option<&Arc<Registry>>,
        args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        Self::open_with(db, aux, args, false)
    }

    fn destroy(&self) -> rusqlite::Result<()> {
        self.registry.with(|m| m.remove(&self.key));
        Ok(())
    }
}

/// One query's flamegraph.
#[derive(Debug)]
struct Result {
    built: Built,
    layout: Layout,
    /// Schema column -> built column.
    columns: Vec<Option<usize>>,
    /// The laid-out cumulative column.
    cumulative: Option<usize>,
}

#[derive(Debug)]
enum Mode {
    Empty,
    SuperRoot,
    Rows(Box<Result>),
}

/// The rows of one call.
#[repr(C)]
pub struct FlamegraphCursor {
    /// SQLite's part; must be first.
    base: ffi::sqlite3_vtab_cursor,
    source: Arc<Source>,
    mode: Mode,
    pos: usize,
}

fn compute(source: &Source, query: &config::Query) -> std::result::Result<Result, FlamegraphError> {
    let resolved = resolve(source, query)?;
    let built = build(source, &resolved)?;
    let primary = query.values.first().map_or("", String::as_str);
    let find = |name: &str| built.names.iter().position(|n| n == name);
    let mut columns =
        vec![None; PROPERTIES + source.properties.len() + 2 * source.candidates.len()];
    let mut set = |i: usize, v: Option<usize>| {
        if let Some(c) = columns.get_mut(i) {
            *c = v;
        }
    };
    set(NAME as usize, find("name"));
    set(SELF_VALUE as usize, find(&format!("self_{primary}")));
    let cumulative = find(&format!("cumulative_{primary}"));
    set(CUMULATIVE_VALUE as usize, cumulative);
    for (i, p) in source.properties.iter().enumerate() {
        set(PROPERTIES + i, find(p));
    }
    let start = PROPERTIES + source.properties.len();
    for (i, c) in source.candidates.iter().enumerate() {
        set(start + 2 * i, find(&format!("self_{c}")));
        set(start + 2 * i + 1, find(&format!("cumulative_{c}")));
    }
    let width: Vec<f64> = (0..built.depth.len())
        .map(|n| match cumulative.and_then(|c| built.columns.get(c)) {
            Some(OutColumn::Int(v)) => v.get(n).copied().flatten().map_or(0.0, |x| x as f64),
            Some(OutColumn::Real(v)) => v.get(n).copied().flatten().unwrap_or(0.0),
            _ => 0.0,
        })
        .map(|w| w.max(0.0))
        .collect();
    let layout = layout::compute(&built.parent, &built.depth, &width);
    Ok(Result {
        built,
        layout,
        columns,
        cumulative,
    })
}

fn set_cell(
    ctx: &mut Context,
    source: &Source,
    col: Option<&OutColumn>,
    node: u32,
) -> rusqlite::Result<()> {
    let n = node as usize;
    match col {
        Some(OutColumn::Int(v)) => match v.get(n).copied().flatten() {
            Some(x) => ctx.set_result(&x),
            None => ctx.set_result(&Null),
        },
        Some(OutColumn::Real(v)) => match v.get(n).copied().flatten() {
            Some(x) => ctx.set_result(&x),
            None => ctx.set_result(&Null),
        },
        Some(OutColumn::Str(v)) => match v.get(n).copied().flatten() {
            Some(s) => ctx.set_result(&source.string(s)),
            None => ctx.set_result(&Null),
        },
        Some(OutColumn::Text(v)) => match v.get(n).and_then(|s| s.as_deref()) {
            Some(s) => ctx.set_result(&s),
            None => ctx.set_result(&Null),
        },
        Some(OutColumn::Null) | None => ctx.set_result(&Null),
    }
}

// SAFETY: `FlamegraphCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor`
// first, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for FlamegraphCursor {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        self.mode = Mode::Empty;
        self.pos = 0;
        let values: Vec<ValueRef<'_>> = args.iter().collect();
        let query = match values.first() {
            Some(ValueRef::Text(t)) => config::decode(&String::from_utf8_lossy(t))?,
            _ => return Err(FlamegraphError::Source("expected a flamegraph config".into()).into()),
        };
        if query.values.is_empty() {
            return Err(
                FlamegraphError::Invalid("at least one value column is required".into()).into(),
            );
        }
        if idx_num == SUPER_ROOT_PLAN {
            if !matches!(values.get(1), Some(ValueRef::Text(b"SUPER_ROOT"))) {
                return Err(module_error("flamegraph: unknown find selector"));
            }
            self.mode = Mode::SuperRoot;
            return Ok(());
        }
        if self.source.rows == 0 {
            return Ok(());
        }
        self.mode = Mode::Rows(Box::new(compute(&self.source, &query)?));
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        match &self.mode {
            Mode::Empty => true,
            Mode::SuperRoot => self.pos > 0,
            Mode::Rows(r) => self.pos >= r.layout.node.len(),
        }
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let r = match &self.mode {
            Mode::Empty => return ctx.set_result(&Null),
            Mode::SuperRoot => {
                return match i {
                    TREE_ID | DEPTH => ctx.set_result(&0i64),
                    CUMULATIVE_VALUE => ctx.set_result(&self.source.value_sum),
                    _ => ctx.set_result(&Null),
                };
            }
            Mode::Rows(r) => r,
        };
        let row = self.pos;
        let node = r.layout.node.get(row).copied().unwrap_or(NONE);
        let parent = r.layout.parent_row.get(row).copied().unwrap_or(NONE);
        let cumulative = r.cumulative.and_then(|c| r.built.columns.get(c));
        match i {
            CONFIG => ctx.set_result(&Null),
            TREE_ID => ctx.set_result(&(row as i64)),
            TREE_PARENT_ID if parent == NONE => ctx.set_result(&Null),
            TREE_PARENT_ID => ctx.set_result(&i64::from(parent)),
            DEPTH => ctx.set_result(&r.built.depth.get(node as usize).copied().unwrap_or(0)),
            PARENT_CUMULATIVE_VALUE if parent == NONE => ctx.set_result(&Null),
            PARENT_CUMULATIVE_VALUE => {
                let p = r.layout.node.get(parent as usize).copied().unwrap_or(NONE);
                set_cell(ctx, &self.source, cumulative, p)
            }
            X_START | X_END => {
                let mut x = r.layout.x_start.get(row).copied().unwrap_or(0.0);
                let is_int = matches!(cumulative, Some(OutColumn::Int(_)));
                if i == X_END {
                    x += match cumulative {
                        Some(OutColumn::Int(v)) => v
                            .get(node as usize)
                            .copied()
                            .flatten()
                            .map_or(0.0, |v| v as f64),
                        Some(OutColumn::Real(v)) => {
                            v.get(node as usize).copied().flatten().unwrap_or(0.0)
                        }
                        _ => 0.0,
                    }
                    .max(0.0);
                }
                if is_int {
                    ctx.set_result(&(x as i64))
                } else {
                    ctx.set_result(&x)
                }
            }
            _ => {
                let col = r
                    .columns
                    .get(i as usize)
                    .copied()
                    .flatten()
                    .and_then(|c| r.built.columns.get(c));
                set_cell(ctx, &self.source, col, node)
            }
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.pos as i64)
    }
}

/// What SQLite calls if the super-root constraint was not handed to the
/// table (it always is).
unsafe extern "C" fn unconsumed(
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _v: *mut *mut ffi::sqlite3_value,
) {
    let msg = c"super-root constraint was not consumed";
    // SAFETY: `ctx` is the context SQLite passed; the message is a static
    // NUL-terminated string.
    unsafe { ffi::sqlite3_result_error(ctx, msg.as_ptr(), -1) }
}

type ScalarFn =
    unsafe extern "C" fn(*mut ffi::sqlite3_context, c_int, *mut *mut ffi::sqlite3_value);

/// `xFindFunction`: overloads [`FIND`] as a constraint operator.
unsafe extern "C" fn find_function(
    _vtab: *mut ffi::sqlite3_vtab,
    _n_arg: c_int,
    name: *const c_char,
    func: *mut Option<ScalarFn>,
    _arg: *mut *mut c_void,
) -> c_int {
    if name.is_null() || func.is_null() {
        return 0;
    }
    // SAFETY: SQLite passes a NUL-terminated function name.
    let name = unsafe { CStr::from_ptr(name) };
    if !name.to_bytes().eq_ignore_ascii_case(FIND.as_bytes()) {
        return 0;
    }
    // SAFETY: `func` is SQLite's out-parameter, checked non-null above.
    unsafe { *func = Some(unconsumed) };
    c_int::from(FIND_OP)
}

/// rusqlite's module for [`FlamegraphTab`] with `xFindFunction` set.
pub(crate) fn module() -> &'static Module<'static, FlamegraphTab> {
    static PATCHED: OnceLock<ffi::sqlite3_module> = OnceLock::new();
    let m = PATCHED.get_or_init(|| {
        let base: &'static Module<'static, FlamegraphTab> = read_only_module::<FlamegraphTab>();
        // SAFETY: `Module` is `#[repr(transparent)]` over `sqlite3_module`
        // (its other field is a zero-sized marker), so reading it as one
        // copies the function table rusqlite built.
        let mut m =
            unsafe { std::ptr::read(std::ptr::from_ref(base).cast::<ffi::sqlite3_module>()) };
        m.xFindFunction = Some(find_function);
        m
    });
    // SAFETY: the same layout as above; `m` lives in a static.
    unsafe { &*std::ptr::from_ref(m).cast::<Module<'static, FlamegraphTab>>() }
}
