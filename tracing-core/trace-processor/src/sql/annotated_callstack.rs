//! `experimental_annotated_callstack(callsite_id)`: a callsite and its
//! ancestors (leaf first), each frame annotated as upstream annotates ART
//! stacks: `interp`, `jit` or `aot` for managed frames (by the mapping's
//! kind), `common-frame` / `common-frame-interp` for libart's frames below
//! a managed one, `common-frame` for `art_jni_trampoline` (whose next
//! frame is kept unannotated), NULL otherwise. A table-valued function: a
//! virtual table whose hidden column takes the argument.

use std::ffi::c_int;
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::{Null, ValueRef};
use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};

use crate::column_store::table::{Cell, Table};

/// The stack-profile tables the function walks.
#[derive(Debug, Clone)]
pub struct StackTables {
    /// `__intrinsic_stack_profile_callsite` (id, depth, parent_id, frame_id).
    pub callsites: Arc<Table>,
    /// `__intrinsic_stack_profile_frame` (id, name, mapping, ...).
    pub frames: Arc<Table>,
    /// `__intrinsic_stack_profile_mapping` (..., name last).
    pub mappings: Arc<Table>,
}

/// What a mapping holds, for the annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MapType {
    ArtInterp,
    ArtJit,
    ArtAot,
    NativeLibart,
    NativeOther,
    Other,
}

fn classify(map: &str) -> MapType {
    if map.is_empty() {
        return MapType::Other;
    }
    if map.starts_with("/memfd:jit-cache") || map.starts_with("/memfd:jit-zygote-cache") {
        return MapType::ArtJit;
    }
    if let Some(pos) = map.rfind('/') {
        let file = &map[pos..];
        if file.starts_with("/libart.so") || file.starts_with("/libartd.so") {
            return MapType::NativeLibart;
        }
    }
    if let Some(pos) = map.rfind('.') {
        let ext = &map[pos..];
        for (prefix, t) in [
            (".so", MapType::NativeOther),
            (".dex", MapType::ArtInterp),
            (".vdex", MapType::ArtInterp),
            (".jar", MapType::ArtInterp),
            (".apk", MapType::ArtInterp),
            (".oat", MapType::ArtAot),
            (".odex", MapType::ArtAot),
        ] {
            if ext.starts_with(prefix) {
                return t;
            }
        }
    }
    MapType::Other
}

/// One output row: id, depth, parent_id, frame_id, annotation.
type Row = (i64, i64, Option<i64>, i64, Option<&'static str>);

fn int(t: &Table, row: usize, col: usize) -> Option<i64> {
    match t.cell(row, col) {
        Cell::Int(v) => Some(v),
        _ => None,
    }
}

fn text(t: &Table, row: usize, col: usize) -> &str {
    match t.cell(row, col) {
        Cell::Str(s) => s,
        _ => "",
    }
}

fn annotate(st: &StackTables, start: i64) -> Vec<Row> {
    let cs = &st.callsites;
    let mut chain = Vec::new();
    let mut cur = Some(start);
    while let Some(id) = cur {
        let Some(row) = usize::try_from(id).ok().filter(|r| *r < cs.len) else {
            break;
        };
        if chain.len() > cs.len {
            break;
        }
        chain.push(row);
        cur = int(cs, row, 2);
    }
    #[derive(PartialEq)]
    enum State {
        Initial,
        EraseLibart,
        KeepNext,
    }
    let mut state = State::Initial;
    let mut reversed: Vec<Option<&'static str>> = Vec::new();
    for &row in chain.iter().rev() {
        if state == State::KeepNext {
            reversed.push(None);
            state = State::EraseLibart;
            continue;
        }
        let frame = int(cs, row, 3)
            .and_then(|f| usize::try_from(f).ok())
            .unwrap_or(usize::MAX);
        let fname = text(&st.frames, frame, 1);
        if fname == "art_jni_trampoline" {
            reversed.push(Some("common-frame"));
            state = State::KeepNext;
            continue;
        }
        let mapping = int(&st.frames, frame, 2)
            .and_then(|m| usize::try_from(m).ok())
            .unwrap_or(usize::MAX);
        let name_col = st.mappings.columns.len().saturating_sub(1);
        let map_type = classify(text(&st.mappings, mapping, name_col));
        let managed = match map_type {
            MapType::ArtInterp => Some("interp"),
            MapType::ArtJit => Some("jit"),
            MapType::ArtAot => Some("aot"),
            _ => None,
        };
        if let Some(a) = managed {
            reversed.push(Some(a));
            if state == State::Initial {
                state = State::EraseLibart;
            }
            continue;
        }
        if state == State::EraseLibart && map_type == MapType::NativeLibart {
            let interp = [
                "nterp_",
                "Nterp",
                "ExecuteNterp",
                "ExecuteSwitchImpl",
                "_ZN3art11interpreter",
            ]
            .iter()
            .any(|p| fname.starts_with(p));
            reversed.push(Some(if interp {
                "common-frame-interp"
            } else {
                "common-frame"
            }));
            continue;
        }
        reversed.push(None);
    }
    chain
        .iter()
        .zip(reversed.iter().rev())
        .map(|(&row, a)| {
            (
                int(cs, row, 0).unwrap_or(0),
                int(cs, row, 1).unwrap_or(0),
                int(cs, row, 2),
                int(cs, row, 3).unwrap_or(0),
                *a,
            )
        })
        .collect()
}

/// The table function's virtual table.
#[repr(C)]
pub struct AnnotatedTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    tables: Arc<StackTables>,
}

/// Column of the argument.
const START_ID: c_int = 5;

// SAFETY: `AnnotatedTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for AnnotatedTab {
    type Aux = Arc<StackTables>;
    type Cursor = AnnotatedCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Arc<StackTables>>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let tables = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("tables missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        Ok((
            "CREATE TABLE x(id BIGINT, depth BIGINT, parent_id BIGINT, frame_id BIGINT, \
             annotation TEXT, start_id HIDDEN)"
                .to_owned(),
            AnnotatedTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                tables,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let mut arg = None;
        for (i, c) in info.constraints().enumerate() {
            if c.is_usable()
                && c.column() == START_ID
                && c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ
            {
                arg = Some(i);
                break;
            }
        }
        match arg {
            Some(i) => {
                let mut u = info.constraint_usage(i);
                u.set_argv_index(1);
                u.set_omit(true);
                info.set_idx_num(1);
                info.set_estimated_cost(10.0);
            }
            None => {
                info.set_idx_num(0);
                info.set_estimated_cost(1e12);
            }
        }
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<AnnotatedCursor> {
        Ok(AnnotatedCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            tables: self.tables.clone(),
            rows: Vec::new(),
            start: None,
            pos: 0,
        })
    }
}

/// The rows of one call.
#[repr(C)]
pub struct AnnotatedCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    tables: Arc<StackTables>,
    rows: Vec<Row>,
    start: Option<i64>,
    pos: usize,
}

// SAFETY: `AnnotatedCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor`
// first, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for AnnotatedCursor {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        self.rows.clear();
        self.pos = 0;
        self.start = None;
        if idx_num != 1 {
            return Ok(());
        }
        match args.iter().next() {
            Some(ValueRef::Integer(v)) => {
                if v < 0 || v as u64 >= self.tables.callsites.len as u64 {
                    return Err(rusqlite::Error::ModuleError(format!(
                        "callsite with id {v} not found"
                    )));
                }
                self.start = Some(v);
                self.rows = annotate(&self.tables, v);
            }
            Some(ValueRef::Null) | None => {}
            Some(_) => {
                return Err(rusqlite::Error::ModuleError(
                    "invalid input callsite id".into(),
                ));
            }
        }
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.pos >= self.rows.len()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let Some(r) = self.rows.get(self.pos) else {
            return ctx.set_result(&Null);
        };
        match i {
            0 => ctx.set_result(&r.0),
            1 => ctx.set_result(&r.1),
            2 => match r.2 {
                Some(v) => ctx.set_result(&v),
                None => ctx.set_result(&Null),
            },
            3 => ctx.set_result(&r.3),
            4 => match r.4 {
                Some(s) => ctx.set_result(&s),
                None => ctx.set_result(&Null),
            },
            _ => match self.start {
                Some(v) => ctx.set_result(&v),
                None => ctx.set_result(&Null),
            },
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.pos as i64)
    }
}

/// Registers the function over the stack tables.
pub fn register(conn: &Connection, tables: StackTables) -> rusqlite::Result<()> {
    conn.create_module(
        "experimental_annotated_callstack",
        eponymous_only_module::<AnnotatedTab>(),
        Some(Arc::new(tables)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_are_classified_by_name() {
        assert_eq!(classify("/memfd:jit-cache (deleted)"), MapType::ArtJit);
        assert_eq!(
            classify("/apex/com.android.art/lib64/libart.so"),
            MapType::NativeLibart
        );
        assert_eq!(classify("/system/lib64/libc.so"), MapType::NativeOther);
        assert_eq!(classify("/example.vdex"), MapType::ArtInterp);
        assert_eq!(
            classify("/system/framework/arm64/boot.oat"),
            MapType::ArtAot
        );
        assert_eq!(classify(""), MapType::Other);
        assert_eq!(classify("/bin/sh"), MapType::Other);
    }
}
