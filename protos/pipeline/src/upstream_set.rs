//! The upstream set: the Perfetto files of [`UPSTREAM_FILES`] (and what they
//! import), parsed from the pinned crate, with `FtraceEvent` cut down to
//! [`FTRACE_EVENTS`] and the ftrace messages no kept event reaches dropped.
//! Its files are renamed under [`UPSTREAM_PREFIX`] so that their generated
//! code sits apart from ours in `protos/src/generated`.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use protozero_codegen::model::{FieldType, MessageDef};
use protozero_codegen::{Config, Schema};

use crate::{FTRACE_EVENTS, PipelineError, UPSTREAM_FILES};

/// The directory whose messages are pruned to what is reachable.
const FTRACE_DIR: &str = "perfetto/trace/ftrace/";

/// Where upstream's files go in the generated directory: `upstream/` in
/// place of the crate's `protos/` (`protos/perfetto/trace/ps/process_tree.proto`
/// is generated as `upstream/perfetto/trace/ps/process_tree.rs`).
pub(crate) const UPSTREAM_PREFIX: &str = "upstream/";

/// Parses the upstream set from the upstream root `root`, pruned and
/// renamed.
pub(crate) fn parse(root: &Path, protoc: bool) -> Result<Schema, PipelineError> {
    let mut config = Config::new();
    config.include(root).front_end(crate::front_end(protoc));
    for f in UPSTREAM_FILES {
        config.input(root.join(f));
    }
    let mut schema = config.parse()?;
    prune_ftrace(&mut schema)?;
    for file in &mut schema.files {
        let rest = file.name.strip_prefix("protos/").unwrap_or(&file.name);
        file.name = format!("{UPSTREAM_PREFIX}{rest}");
    }
    Ok(schema)
}

/// Every message and enum type a message uses (its fields, nested types').
fn referenced_types(m: &MessageDef, out: &mut Vec<String>) {
    for f in &m.fields {
        if let FieldType::Message(t) | FieldType::Enum(t) = &f.ty {
            out.push(t.clone());
        }
    }
    for n in &m.messages {
        referenced_types(n, out);
    }
}

/// Keeps, of the `trace/ftrace` files, `FtraceEventBundle` with only the
/// [`FTRACE_EVENTS`] fields of `FtraceEvent` and the types those reach;
/// files left empty are dropped. Other files are untouched.
fn prune_ftrace(schema: &mut Schema) -> Result<(), PipelineError> {
    let is_ftrace = |name: &str| name.contains(FTRACE_DIR);
    // Cut FtraceEvent down to the chosen fields first.
    for file in schema.files.iter_mut().filter(|f| is_ftrace(&f.name)) {
        for m in &mut file.messages {
            if m.name == "FtraceEvent" {
                m.fields
                    .retain(|f| FTRACE_EVENTS.contains(&f.name.as_str()));
                let kept: BTreeSet<&str> = m.fields.iter().map(|f| f.name.as_str()).collect();
                if let Some(want) = FTRACE_EVENTS.iter().find(|w| !kept.contains(*w)) {
                    return Err(PipelineError::Upstream(format!(
                        "FtraceEvent.{want} not found"
                    )));
                }
            }
        }
    }
    // The types reachable from the non-ftrace files and the bundle.
    let mut keep: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<String> = vec![
        "perfetto.protos.FtraceEventBundle".to_owned(),
        "perfetto.protos.FtraceStats".to_owned(),
    ];
    let mut index = HashMap::new();
    for file in &schema.files {
        for m in &file.messages {
            index.insert(m.full_name.clone(), m);
            if !is_ftrace(&file.name) {
                todo.push(m.full_name.clone());
            }
        }
    }
    while let Some(t) = todo.pop() {
        if !keep.insert(t.clone()) {
            continue;
        }
        if let Some(m) = index.get(&t) {
            referenced_types(m, &mut todo);
        }
    }
    // A nested type keeps its top-level message.
    let top_kept = |full: &str| {
        keep.iter()
            .any(|k| k == full || k.starts_with(&format!("{full}.")))
    };
    for file in schema.files.iter_mut().filter(|f| is_ftrace(&f.name)) {
        file.messages.retain(|m| top_kept(&m.full_name));
        file.enums.retain(|e| keep.contains(&e.full_name));
    }
    schema
        .files
        .retain(|f| !is_ftrace(&f.name) || !f.messages.is_empty() || !f.enums.is_empty());
    Ok(())
}
