//! Text-format TraceConfigs, parsed over the full upstream schema (every
//! data source config, and the fields newer than v51 that `protos/`
//! declares), with errors in the `perfetto` command's form:
//! `FILE:LINE:COL error: MESSAGE`, the line, and a caret under the column.

use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor};

use crate::schema;

/// A text config that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column} error: {message}\n{source_line}\n{caret}")]
pub struct TextConfigError {
    /// The file name as given (`-` for stdin).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The offending line.
    pub source_line: String,
    /// Spaces and a `^` under the column.
    pub caret: String,
}

impl TextConfigError {
    /// The error at byte `offset` of `text`.
    fn at(file: &str, text: &str, offset: usize, message: String) -> TextConfigError {
        let offset = offset.min(text.len());
        let before = text.get(..offset).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = text
            .get(line_start..offset)
            .map_or(1, |s| s.chars().count() + 1);
        let source_line = text[line_start..].lines().next().unwrap_or("").to_owned();
        let caret = format!("{}^", " ".repeat(column - 1));
        TextConfigError {
            file: file.to_owned(),
            line,
            column,
            message,
            source_line,
            caret,
        }
    }
}

/// Parses `text` (named `file` in errors) as a message of type `desc`.
pub fn parse_message(
    desc: MessageDescriptor,
    file: &str,
    text: &str,
) -> Result<DynamicMessage, TextConfigError> {
    DynamicMessage::parse_text_format(desc, text).map_err(|e| {
        use miette::Diagnostic;
        let offset = e
            .labels()
            .and_then(|mut l| l.next())
            .map_or(0, |l| l.offset());
        let mut message = e.to_string();
        if message.contains("not found") {
            message.push_str(
                " (the schema is Perfetto v51's, plus the newer fields zerotrace declares)",
            );
        }
        TextConfigError::at(file, text, offset, message)
    })
}

/// Parses a text TraceConfig and returns its binary encoding.
pub fn parse(file: &str, text: &str) -> Result<Vec<u8>, TextConfigError> {
    Ok(parse_message(schema::trace_config(), file, text)?.encode_to_vec())
}

/// A binary message of type `desc` as text (every field by name).
pub fn to_text(desc: MessageDescriptor, bytes: &[u8]) -> Result<String, prost::DecodeError> {
    let msg = DynamicMessage::decode(desc, bytes)?;
    Ok(msg.to_text_format_with_options(
        &prost_reflect::text_format::FormatOptions::new()
            .pretty(true)
            .skip_unknown_fields(false),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::Value;

    #[test]
    fn parses_upstream_data_source_configs_and_newer_fields() {
        let text = r#"
            buffers { size_kb: 1024 fill_policy: RING_BUFFER name: "main" }
            data_sources: {
              config {
                name: "linux.ftrace"
                ftrace_config { ftrace_events: ["sched/sched_switch", "power/suspend_resume"] }
              }
            }
            write_flush_mode: WRITE_FLUSH_AUTO
            duration_ms: 0x2710
        "#;
        let bytes = parse("cfg.txt", text).unwrap();
        let back = to_text(schema::trace_config(), &bytes).unwrap();
        assert!(back.contains("sched/sched_switch"), "{back}");
        assert!(back.contains("duration_ms: 10000"), "{back}");
        assert!(back.contains("name: \"main\""), "{back}");
    }

    /// Parses `text` as a TraceConfig (unwrapping: tests only).
    fn config(text: &str) -> DynamicMessage {
        match parse_message(schema::trace_config(), "t.cfg", text) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    /// The value of the field at `path` (names, dot-separated; `name[i]`
    /// picks an element of a repeated field).
    fn get(msg: &DynamicMessage, path: &str) -> Value {
        let mut value = Value::Message(msg.clone());
        for step in path.split('.') {
            let (name, index) = match step.split_once('[') {
                Some((n, i)) => (n, Some(i.trim_end_matches(']').parse::<usize>().unwrap())),
                None => (step, None),
            };
            let Value::Message(m) = value else {
                panic!("{path}: {step} is not in a message")
            };
            let v = m
                .get_field_by_name(name)
                .unwrap_or_else(|| panic!("{path}: no {name}"))
                .into_owned();
            value = match index {
                Some(i) => v.as_list().unwrap()[i].clone(),
                None => v,
            };
        }
        value
    }

    #[test]
    fn message_values_with_and_without_colon_and_angle_brackets() {
        let m = config(
            "buffers { size_kb: 1 }\nbuffers: { size_kb: 2 }\nbuffers < size_kb: 3 >\nbuffers: < size_kb: 4 >",
        );
        for (i, kb) in [1u32, 2, 3, 4].into_iter().enumerate() {
            assert_eq!(get(&m, &format!("buffers[{i}].size_kb")), Value::U32(kb));
        }
    }

    #[test]
    fn enums_by_name_or_number() {
        let m = config("buffers { fill_policy: DISCARD } buffers { fill_policy: 1 }");
        assert_eq!(get(&m, "buffers[0].fill_policy"), Value::EnumNumber(2));
        assert_eq!(get(&m, "buffers[1].fill_policy"), Value::EnumNumber(1));
    }

    #[test]
    fn lists_of_scalars_enums_and_messages() {
        let m = config(
            r#"
            buffers: [{ size_kb: 10 }, { size_kb: 20 fill_policy: DISCARD }]
            data_sources {
              config {
                name: "linux.ftrace"
                ftrace_config {
                  ftrace_events: ["sched/sched_switch", "sched/sched_wakeup"]
                  ftrace_events: "power/cpu_idle"
                  atrace_apps: []
                }
              }
            }
            data_sources {
              config {
                name: "linux.process_stats"
                process_stats_config { quirks: [DISABLE_ON_DEMAND, 1] }
              }
            }
            "#,
        );
        assert_eq!(get(&m, "buffers[1].size_kb"), Value::U32(20));
        assert_eq!(get(&m, "buffers[1].fill_policy"), Value::EnumNumber(2));
        let events = get(&m, "data_sources[0].config.ftrace_config.ftrace_events");
        let events: Vec<_> = events.as_list().unwrap().iter().cloned().collect();
        assert_eq!(
            events,
            ["sched/sched_switch", "sched/sched_wakeup", "power/cpu_idle"]
                .map(|s| Value::String(s.into()))
        );
        let quirks = get(&m, "data_sources[1].config.process_stats_config.quirks");
        assert_eq!(quirks.as_list().unwrap().len(), 2);
    }

    #[test]
    fn comments_and_separators() {
        let m = config(
            "# leading comment\nduration_ms: 5; # trailing comment\n\
             buffers { size_kb: 1, fill_policy: RING_BUFFER; }, \
             flush_period_ms: 7,\n# last line is a comment without newline",
        );
        assert_eq!(get(&m, "duration_ms"), Value::U32(5));
        assert_eq!(get(&m, "flush_period_ms"), Value::U32(7));
        assert_eq!(get(&m, "buffers[0].fill_policy"), Value::EnumNumber(1));
    }

    #[test]
    fn strings_concatenate_and_unescape() {
        let m = config(
            r#"unique_session_name: "ab" 'cd'
                 "\n\t\\\"\'\x41\101\u00e9"
               bugreport_filename: 'it''s'"#,
        );
        assert_eq!(
            get(&m, "unique_session_name"),
            Value::String("abcd\n\t\\\"'AA\u{e9}".into())
        );
        assert_eq!(get(&m, "bugreport_filename"), Value::String("its".into()));
    }

    #[test]
    fn integers_in_decimal_hex_and_octal() {
        let m = config(
            "duration_ms: 0x7fffffff\nflush_period_ms: 0X1f\nfile_write_period_ms: 017\n\
             max_file_size_bytes: 18446744073709551615 buffers { size_kb: 0 }",
        );
        assert_eq!(get(&m, "duration_ms"), Value::U32(0x7fff_ffff));
        assert_eq!(get(&m, "flush_period_ms"), Value::U32(31));
        assert_eq!(get(&m, "file_write_period_ms"), Value::U32(15));
        assert_eq!(get(&m, "max_file_size_bytes"), Value::U64(u64::MAX));
        assert_eq!(get(&m, "buffers[0].size_kb"), Value::U32(0));
    }

    /// Parses `text` as a `TestConfig.DummyFields`, the message that has a
    /// field of every scalar type.
    fn dummy(text: &str) -> DynamicMessage {
        let desc = schema::pool()
            .get_message_by_name("perfetto.protos.TestConfig.DummyFields")
            .unwrap();
        match parse_message(desc, "d.cfg", text) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn every_scalar_type_with_negative_numbers_and_exponents() {
        let m = dummy(
            r#"
            field_uint32: 4294967295 field_int32: -2147483648
            field_uint64: 0xFFFFFFFFFFFFFFFF field_int64: -9223372036854775808
            field_fixed64: 01777777777777777777777 field_sfixed64: -0x10
            field_fixed32: 0 field_sfixed32: - 7
            field_double: -1.5e-3 field_float: 2.5E+2f
            field_sint64: -077 field_sint32: -1
            field_string: "s" field_bytes: "\x00\xff"
            "#,
        );
        let expect = [
            ("field_uint32", Value::U32(u32::MAX)),
            ("field_int32", Value::I32(i32::MIN)),
            ("field_uint64", Value::U64(u64::MAX)),
            ("field_int64", Value::I64(i64::MIN)),
            ("field_fixed64", Value::U64(u64::MAX)),
            ("field_sfixed64", Value::I64(-16)),
            ("field_fixed32", Value::U32(0)),
            ("field_sfixed32", Value::I32(-7)),
            ("field_double", Value::F64(-1.5e-3)),
            ("field_float", Value::F32(250.0)),
            ("field_sint64", Value::I64(-63)),
            ("field_sint32", Value::I32(-1)),
            ("field_string", Value::String("s".into())),
            ("field_bytes", Value::Bytes(vec![0u8, 0xff].into())),
        ];
        for (name, value) in expect {
            assert_eq!(get(&m, name), value, "{name}");
        }
    }

    #[test]
    fn floats_in_every_spelling() {
        for (text, value) in [
            ("1", 1.0),
            ("-2", -2.0),
            ("3.", 3.0),
            (".5", 0.5),
            ("1e3", 1000.0),
            ("1E-2", 0.01),
            ("-6.25e+1", -62.5),
            ("7f", 7.0),
            ("inf", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ] {
            let m = dummy(&format!("field_double: {text}"));
            assert_eq!(get(&m, "field_double"), Value::F64(value), "{text}");
        }
        let m = dummy("field_double: nan");
        assert!(get(&m, "field_double").as_f64().unwrap().is_nan());
    }

    #[test]
    fn booleans() {
        let desc = schema::trace_config();
        for (text, value) in [
            ("true", true),
            ("True", true),
            ("t", true),
            ("1", true),
            ("false", false),
            ("False", false),
            ("f", false),
            ("0", false),
        ] {
            let m = parse_message(
                desc.clone(),
                "b",
                &format!("enable_extra_guardrails: {text}"),
            )
            .unwrap();
            assert_eq!(
                get(&m, "enable_extra_guardrails"),
                Value::Bool(value),
                "{text}"
            );
        }
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let text = "buffers { size_kb: 1024 }\ndata_sources { config { nmae: \"x\" } }\n";
        let e = parse("my.cfg", text).unwrap_err();
        assert_eq!((e.line, e.column), (2, 25), "{e}");
        let shown = e.to_string();
        assert!(shown.starts_with("my.cfg:2:25 error: "), "{shown}");
        assert!(shown.contains("nmae"), "{shown}");
        assert!(
            shown.ends_with(&format!("\n{}^", " ".repeat(24))),
            "{shown}"
        );
    }
}
