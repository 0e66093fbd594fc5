//! Every field of every message from TraceConfig down to DataSourceConfig
//! has a decision, and the refused ones are refused by name.

use super::*;

/// `buffers.experimental_mode` (TRACE_BUFFER_V2, whose DISCARD differs) is
/// refused by name.
#[test]
fn experimental_buffer_mode_is_refused_by_name() {
    let mut w = protozero::HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(64).set_experimental_mode_raw(1);
    }
    let err = SessionConfig::parse(&w.finish().unwrap(), &Limits::default()).unwrap_err();
    assert!(
        err.to_string().contains("buffers.experimental_mode"),
        "{err}"
    );
}

/// From TraceConfig down to DataSourceConfig, every field of every message
/// the service looks into is implemented, refused by name or kept (the
/// service's one table, `config::CONFIG_FIELDS`); DataSourceConfig's fields
/// that the table does not name are typed sub-configs, passed through.
#[test]
fn every_config_field_at_every_depth_has_a_decision() {
    use zerotrace_core::service::{CONFIG_FIELDS, FieldDecisions, Handling};
    let schema = schema();
    let table: HashMap<&str, FieldDecisions> = CONFIG_FIELDS.iter().copied().collect();
    let mut missing = Vec::new();
    let mut seen = HashSet::new();
    let mut todo = vec![".perfetto.protos.TraceConfig".to_owned()];
    while let Some(full) = todo.pop() {
        if !seen.insert(full.clone()) {
            continue;
        }
        let short = full.trim_start_matches(".perfetto.protos.");
        let fields = schema
            .get(&full)
            .unwrap_or_else(|| panic!("{full} not in the schema"));
        let Some(decided) = table.get(short) else {
            missing.push(format!("message {short}: no table"));
            continue;
        };
        for entry in decided.iter() {
            assert!(
                fields
                    .iter()
                    .any(|f| f.number == entry.0 && f.name == entry.1),
                "{short}: the table's {} = {} is not in the schema",
                entry.1,
                entry.0
            );
        }
        for f in fields {
            match decided.iter().find(|e| e.0 == f.number) {
                Some((_, _, Handling::Implemented)) if f.kind == 11 => {
                    todo.push(f.type_name.clone());
                }
                Some(_) => {}
                None if short == "DataSourceConfig" && f.kind == 11 => {}
                None => missing.push(format!("{short}.{} = {}", f.name, f.number)),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "fields without a decision: {missing:#?}"
    );
    for (name, _) in CONFIG_FIELDS {
        assert!(
            seen.contains(&format!(".perfetto.protos.{name}")),
            "{name} is not reached"
        );
    }
    // The walk reached the typed sub-configs and let them pass (this
    // schema has a few; the CLI's test walks Perfetto's full one).
    let ds = &schema[".perfetto.protos.DataSourceConfig"];
    assert!(ds.iter().any(|f| f.name == "track_event_config"));
}

/// The refused fields of every table are refused by name.
#[test]
fn refused_nested_fields_are_refused_by_name() {
    let cases: [(&str, Vec<u8>); 4] = [
        (
            "buffers.experimental_mode",
            config(&[], &[], |c| {
                c.add_buffers().set_size_kb(64).set_experimental_mode_raw(1);
            }),
        ),
        (
            "buffers.clear_before_clone",
            config(&[], &[], |c| {
                c.add_buffers().set_size_kb(64).set_clear_before_clone(true);
            }),
        ),
        (
            "enable_concurrent_session_events",
            config(&[(64, false)], &[], |c| {
                c.begin_builtin_data_sources()
                    .set_enable_concurrent_session_events(true);
            }),
        ),
        (
            "data_sources.config.protovm_config",
            config(&[(64, false)], &[], |c| {
                c.add_data_sources()
                    .begin_config()
                    .set_name("ds")
                    .begin_protovm_config()
                    .set_memory_limit_kb(64);
            }),
        ),
    ];
    for (name, raw) in cases {
        let err = SessionConfig::parse(&raw, &Limits::default()).unwrap_err();
        assert!(err.to_string().contains(name), "{name}: {err}");
    }
}
