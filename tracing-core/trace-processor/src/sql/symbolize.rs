//! `__intrinsic_symbolize(rows)`: the native part of the
//! `callstacks.symbolize` module. Its argument is
//! `__intrinsic_graph_rows_agg(file_name, rel_pc, mapping_id, address)`
//! over the frames to name; each row's ELF file (a binary, or its split
//! debug file) is read from `file_name` and the address `rel_pc` (as the
//! file states addresses) looked up in its DWARF, inlined functions
//! innermost first, as LLVM's symbolizer answers upstream's: a row per
//! function, with its source file and line, `mapping_id` and `address`
//! repeated. An address the file does not name is one row
//! `<invalid>`/`<invalid>`/0 (its symbol table's name, when it has one);
//! a file that cannot be read as ELF gives one row of NULLs. Reading files
//! is file access: refused unless `--allow-sql-file-access`. The file
//! reading and DWARF lookup are `zerotrace-profiling`'s symbolizer, the
//! one `zerotrace symbolize` uses.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Value;
use zerotrace_profiling::view::ModuleSymbolizer;

use super::file_access::FileAccess;
use super::graphs::rows;
use super::prelude::table_function::{self, TableFn};

/// The name LLVM gives what it cannot name.
const INVALID: &str = "<invalid>";

/// The table function's name.
const NAME: &str = "__intrinsic_symbolize";

/// One frame to name.
struct Request {
    file: Option<String>,
    rel_pc: Option<i64>,
    mapping_id: Value,
    address: Value,
}

/// `__intrinsic_symbolize(rows)`.
struct Symbolize {
    access: FileAccess,
}

impl TableFn for Symbolize {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("function_name", "TEXT"),
            ("file_name", "TEXT"),
            ("line_number", "BIGINT"),
            ("mapping_id", "BIGINT"),
            ("address", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["frames"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let given = rows::decode(args.first().unwrap_or(&Value::Null))
            .map_err(|e| format!("{NAME}: {e}"))?;
        if given.values.is_empty() {
            return Ok(Vec::new());
        }
        if given.arity != 4 {
            return Err(format!(
                "{NAME}: each frame needs file_name, rel_pc, mapping_id and address"
            ));
        }
        if !self.access.allowed() {
            return Err(format!(
                "{NAME}: symbolizing reads the binaries, and SQL file access is off \
                 (run with --allow-sql-file-access)"
            ));
        }
        let requests: Vec<Request> = given
            .iter()
            .map(|r| Request {
                file: match &r[0] {
                    Value::Text(t) => Some(t.clone()),
                    _ => None,
                },
                rel_pc: match r[1] {
                    Value::Integer(v) => Some(v),
                    _ => None,
                },
                mapping_id: r[2].clone(),
                address: r[3].clone(),
            })
            .collect();
        // Each file read once, then each read file parsed once.
        let mut bytes: HashMap<&str, Option<Vec<u8>>> = HashMap::new();
        for r in &requests {
            if let Some(f) = r.file.as_deref() {
                bytes.entry(f).or_insert_with(|| std::fs::read(f).ok());
            }
        }
        let symbolizers: HashMap<&str, ModuleSymbolizer<'_>> = bytes
            .iter()
            .filter_map(|(f, b)| Some((*f, ModuleSymbolizer::new(b.as_deref()?).ok()?)))
            .collect();
        let mut out = Vec::new();
        for r in &requests {
            let found = r
                .file
                .as_deref()
                .and_then(|f| symbolizers.get(f))
                .zip(r.rel_pc.and_then(|pc| u64::try_from(pc).ok()));
            let Some((sym, pc)) = found else {
                out.push(vec![
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    r.mapping_id.clone(),
                    r.address.clone(),
                ]);
                continue;
            };
            let lines = sym.lines(pc);
            if lines.is_empty() {
                out.push(vec![
                    Value::Text(INVALID.into()),
                    Value::Text(INVALID.into()),
                    Value::Integer(0),
                    r.mapping_id.clone(),
                    r.address.clone(),
                ]);
            }
            for l in lines {
                out.push(vec![
                    Value::Text(l.function_name),
                    Value::Text(l.source_file.unwrap_or_else(|| INVALID.into())),
                    Value::Integer(i64::from(l.line)),
                    r.mapping_id.clone(),
                    r.address.clone(),
                ]);
            }
        }
        Ok(out)
    }
}

/// Registers `__intrinsic_symbolize`, reading files only while `access`
/// allows it.
pub(crate) fn register(conn: &Connection, access: FileAccess) -> rusqlite::Result<()> {
    table_function::register(conn, NAME, Arc::new(Symbolize { access }))
}
