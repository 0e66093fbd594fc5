//! The service's decision on every config field (`zerotrace_core::service::
//! config::CONFIG_FIELDS`: implemented, refused by name, or kept because
//! Perfetto's service ignores it on Linux) checked against Perfetto's full
//! upstream schema, which the CLI carries (`zerotrace_cli::schema`): from
//! TraceConfig down to DataSourceConfig, whose many typed sub-configs pass
//! through untouched. The core's own test walks the repository's smaller
//! schema; this one catches fields only the upstream schema has.

use std::collections::{HashMap, HashSet};

use prost_reflect::Kind;
use zerotrace_core::service::{CONFIG_FIELDS, FieldDecisions, Handling};

#[test]
fn every_upstream_config_field_has_a_decision() {
    let table: HashMap<&str, FieldDecisions> = CONFIG_FIELDS.iter().copied().collect();
    let mut missing = Vec::new();
    let mut seen = HashSet::new();
    let mut todo = vec![zerotrace_cli::schema::trace_config()];
    let mut sub_configs = 0;
    while let Some(msg) = todo.pop() {
        let full = msg.full_name().to_owned();
        if !seen.insert(full.clone()) {
            continue;
        }
        let short = full.trim_start_matches("perfetto.protos.");
        let Some(decided) = table.get(short) else {
            missing.push(format!("message {short}: no table"));
            continue;
        };
        for entry in decided.iter() {
            let field = msg.get_field(entry.0);
            assert_eq!(
                field.as_ref().map(|f| f.name()),
                Some(entry.1),
                "{short}: the table's {} = {}",
                entry.1,
                entry.0
            );
        }
        for f in msg.fields() {
            let message = match f.kind() {
                Kind::Message(m) => Some(m),
                _ => None,
            };
            match decided.iter().find(|e| e.0 == f.number()) {
                Some((_, _, Handling::Implemented)) => todo.extend(message),
                Some(_) => {}
                None if short == "DataSourceConfig" && message.is_some() => sub_configs += 1,
                None => missing.push(format!("{short}.{} = {}", f.name(), f.number())),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "fields without a decision: {missing:#?}"
    );
    for (name, _) in CONFIG_FIELDS {
        assert!(
            seen.contains(&format!("perfetto.protos.{name}")),
            "{name} is not reached"
        );
    }
    assert!(
        sub_configs > 30,
        "Perfetto's DataSourceConfig has many typed sub-configs ({sub_configs})"
    );
}
