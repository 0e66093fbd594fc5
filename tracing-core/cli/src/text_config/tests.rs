//! Tests of the text-config reader: grammar, positions, schema checks.

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
    let events: Vec<_> = events.as_list().unwrap().to_vec();
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

/// The error for `text` as a TraceConfig: line, column and message.
fn error(text: &str) -> (usize, usize, String) {
    match parse("e.cfg", text) {
        Ok(_) => panic!("{text:?} parsed"),
        Err(e) => {
            // The display is always the convention's three lines.
            let shown = e.to_string();
            let lines: Vec<&str> = shown.lines().collect();
            assert_eq!(
                lines[0],
                format!("e.cfg:{}:{} error: {}", e.line, e.column, e.message)
            );
            assert_eq!(lines[1], text.lines().nth(e.line - 1).unwrap_or(""));
            assert_eq!(lines[2], format!("{}^", " ".repeat(e.column - 1)));
            (e.line, e.column, e.message)
        }
    }
}

#[track_caller]
fn assert_error(text: &str, line: usize, column: usize, needles: &[&str]) {
    let (l, c, message) = error(text);
    assert_eq!((l, c), (line, column), "{text:?}: {message}");
    for n in needles {
        assert!(message.contains(n), "{text:?}: {message:?} lacks {n:?}");
    }
}

#[test]
fn unknown_fields_are_errors_naming_the_field() {
    assert_error(
        "buffers { size_kb: 1 }\nduraton_ms: 3\n",
        2,
        1,
        &[
            "unknown field 'duraton_ms' in perfetto.protos.TraceConfig",
            "'duration_ms'",
        ],
    );
    // A field newer than both v51 and our protos.
    assert_error(
        "duration_ms: 1\n  buffers { size_kb: 1 frobnicate_on_v99: true }",
        2,
        24,
        &[
            "unknown field 'frobnicate_on_v99' in perfetto.protos.TraceConfig.BufferConfig",
            "neither Perfetto v51's schema nor the newer fields zerotrace declares",
        ],
    );
}

#[test]
fn bad_enum_values() {
    assert_error(
        "buffers {\n  fill_policy: RING\n}",
        2,
        16,
        &[
            "'RING' is not a value of perfetto.protos.TraceConfig.BufferConfig.FillPolicy",
            "'fill_policy'",
            "RING_BUFFER = 1",
        ],
    );
    // Perfetto's enums are closed (proto2): numbers must be declared.
    assert_error(
        "buffers { fill_policy: 9 }",
        1,
        24,
        &["9 is not a value of perfetto.protos.TraceConfig.BufferConfig.FillPolicy"],
    );
    assert_error("buffers { fill_policy: -1 }", 1, 24, &["-1 is not a value"]);
    assert_error(
        "buffers { fill_policy: \"DISCARD\" }",
        1,
        24,
        &["takes an enum value name or number, but found '\"DISCARD\"'"],
    );
}

#[test]
fn values_of_the_wrong_type() {
    assert_error(
        "buffers {\n  size_kb: \"big\"\n}",
        2,
        12,
        &["'size_kb' (uint32) takes an integer, but found '\"big\"'"],
    );
    assert_error(
        "duration_ms: 1.5",
        1,
        14,
        &["'duration_ms' (uint32) takes an integer"],
    );
    assert_error(
        "buffers: 5",
        1,
        10,
        &["'buffers' (perfetto.protos.TraceConfig.BufferConfig) takes a message"],
    );
    assert_error(
        "unique_session_name: abc",
        1,
        22,
        &["takes a quoted string, but found 'abc'"],
    );
    assert_error(
        "enable_extra_guardrails: 2",
        1,
        26,
        &["takes true or false"],
    );
    assert_error(
        "duration_ms: [1, 2]",
        1,
        14,
        &["'duration_ms' is not a repeated field"],
    );
    assert_error(
        "data_sources { config { for_testing { dummy_fields { field_double: 0x10 } } } }",
        1,
        68,
        &["'field_double' (double) takes a decimal number, but found '0x10'"],
    );
    // A scalar written like a message.
    assert_error(
        "duration_ms { }",
        1,
        13,
        &["takes an integer, but found '{'"],
    );
}

#[test]
fn integers_out_of_range_as_written() {
    assert_error(
        "buffers { size_kb: 0x1FFFFFFFF }",
        1,
        20,
        &["0x1FFFFFFFF is out of range for 'size_kb' (uint32: 0 to 4294967295)"],
    );
    assert_error(
        "\n\nbuffers { size_kb: -1 }",
        3,
        20,
        &["-1 is out of range for 'size_kb'"],
    );
    assert_error(
        "max_file_size_bytes: 18446744073709551616",
        1,
        22,
        &["out of range", "uint64: 0 to 18446744073709551615"],
    );
    assert_error(
        "data_sources { config { for_testing { dummy_fields {\n  field_int32: -2147483649 } } } }",
        2,
        16,
        &["-2147483649 is out of range for 'field_int32' (int32: -2147483648 to 2147483647)"],
    );
    assert_error(
        "duration_ms: 99999999999999999999999999999999999999999999",
        1,
        14,
        &["is out of range"],
    );
}

#[test]
fn unterminated_strings_point_at_their_quote() {
    assert_error(
        "duration_ms: 1\nunique_session_name: \"abc\nflush_period_ms: 1",
        2,
        22,
        &["this string is never closed"],
    );
    assert_error("unique_session_name: 'abc", 1, 22, &["never closed"]);
    // An escaped quote does not end a string.
    assert_error("unique_session_name: \"a\\\"", 1, 22, &["never closed"]);
}

#[test]
fn unclosed_brackets_point_at_the_bracket() {
    assert_error(
        "buffers {\n  size_kb: 1\n",
        1,
        9,
        &["'{' is never closed", "reached end of input"],
    );
    // The innermost one left open.
    assert_error(
        "data_sources {\n  config {\n    name: \"x\"\n  }\n# end\n",
        1,
        14,
        &["'{' is never closed"],
    );
    assert_error(
        "buffers: [\n  { size_kb: 1 },\n",
        1,
        10,
        &["'[' is never closed"],
    );
    assert_error("buffers < size_kb: 1", 1, 9, &["'<' is never closed"]);
}

#[test]
fn a_missing_value_at_the_end_points_after_the_last_token() {
    assert_error(
        "duration_ms: 1\nflush_period_ms:   \n# trailing comment\n",
        2,
        17,
        &["expected an integer, but reached end of input"],
    );
}

#[test]
fn other_syntax_errors_keep_prost_reflects_positions() {
    assert_error(
        "buffers { size_kb: 1 } }",
        1,
        24,
        &["expected a field name, but found '}'"],
    );
    assert_error(
        "duration_ms: 1 duration_ms: 2",
        1,
        29,
        &["'duration_ms' is already set"],
    );
    // Columns count characters, not bytes.
    assert_error(
        "unique_session_name: \"h\u{e9}llo\" @",
        1,
        30,
        &["invalid token"],
    );
    assert_error(
        "duration_ms: 09",
        1,
        14,
        &["'09' starts with 0, which makes it octal"],
    );
    assert_error("duration_ms 5", 1, 13, &["expected ':'"]);
}

#[test]
fn the_first_problem_in_the_text_wins() {
    // A syntax error before an unknown field.
    assert_error(
        "duration_ms: 1 2\nfrob: 1",
        1,
        16,
        &["expected a field name"],
    );
    // An undeclared enum number (which prost-reflect would take) before
    // a syntax error.
    assert_error("buffers { fill_policy: 9 }\n@", 1, 24, &["not a value"]);
    // A lexical error after an unknown field.
    assert_error(
        "frob: 1\nunique_session_name: \"x",
        1,
        1,
        &["unknown field"],
    );
}

#[test]
fn nesting_is_limited() {
    let deep = "data_sources { ".repeat(MAX_DEPTH + 1);
    let (line, column, message) = error(&deep);
    assert_eq!(line, 1);
    assert_eq!(column, 15 * MAX_DEPTH + 14);
    assert!(message.contains("nested more than 100 deep"), "{message}");
}

#[test]
fn unknown_fields_can_be_skipped() {
    let text = "frob: 1, duration_ms: 5; zork { a: [1, 2] x: \"y\" }\n\
                buffers { size_kb: 1 nope: - 3; fill_policy: DISCARD }\n\
                quux: \"a\" 'b' # a comment\n\
                flush_period_ms: 6\n";
    let options = ParseOptions {
        unknown_fields: UnknownFields::Skip,
    };
    let parsed = parse_message_with(schema::trace_config(), "s.cfg", text, options).unwrap();
    let m = &parsed.message;
    assert_eq!(get(m, "duration_ms"), Value::U32(5));
    assert_eq!(get(m, "buffers[0].size_kb"), Value::U32(1));
    assert_eq!(get(m, "buffers[0].fill_policy"), Value::EnumNumber(2));
    assert_eq!(get(m, "flush_period_ms"), Value::U32(6));
    let at: Vec<_> = parsed
        .skipped
        .iter()
        .map(|s| (s.field.as_str(), s.message_type.as_str(), s.line, s.column))
        .collect();
    assert_eq!(
        at,
        [
            ("frob", "perfetto.protos.TraceConfig", 1, 1),
            ("zork", "perfetto.protos.TraceConfig", 1, 26),
            ("nope", "perfetto.protos.TraceConfig.BufferConfig", 2, 22),
            ("quux", "perfetto.protos.TraceConfig", 3, 1),
        ]
    );
    assert_eq!(
        parsed.skipped[2].to_string(),
        format!(
            "s.cfg:2:22 warning: unknown field 'nope' in \
             perfetto.protos.TraceConfig.BufferConfig skipped\n{}\n{}^",
            text.lines().nth(1).unwrap(),
            " ".repeat(21)
        )
    );
    // Other errors are still errors, at their place in the text.
    let e = parse_message_with(
        schema::trace_config(),
        "s.cfg",
        "frob { x: 1 }\nduration_ms: x",
        options,
    )
    .unwrap_err();
    assert_eq!((e.line, e.column), (2, 14), "{e}");
    // By default, unknown fields are errors.
    assert!(parse("s.cfg", "frob: 1").is_err());
}

#[test]
fn tokens() {
    let text = "a_1: -0x1F 017 0 1.5 .5e3 2f 1e 'q\\'' # c\n{}[]<>,:;./ \u{e9}";
    let got: Vec<(Tok, &str)> = scan(text)
        .tokens
        .iter()
        .map(|t| (t.tok, &text[t.start..t.end]))
        .collect();
    use Tok::*;
    assert_eq!(
        got,
        [
            (Ident, "a_1"),
            (Punct(b':'), ":"),
            (Punct(b'-'), "-"),
            (Int, "0x1F"),
            (Int, "017"),
            (Int, "0"),
            (Float, "1.5"),
            (Float, ".5e3"),
            (Float, "2f"),
            (Int, "1"),
            (Ident, "e"),
            (Str, "'q\\''"),
            (Punct(b'{'), "{"),
            (Punct(b'}'), "}"),
            (Punct(b'['), "["),
            (Punct(b']'), "]"),
            (Punct(b'<'), "<"),
            (Punct(b'>'), ">"),
            (Punct(b','), ","),
            (Punct(b':'), ":"),
            (Punct(b';'), ";"),
            (Punct(b'.'), "."),
            (Punct(b'/'), "/"),
            (Other, "\u{e9}"),
        ]
    );
    let s = scan("a { b [ c < >");
    assert_eq!(s.unclosed, Some(6));
    assert!(s.error.is_none());
    // 09 is an error, 09.5 and 09e1 are floats.
    assert!(scan("x: 09").error.is_some());
    assert_eq!(scan("x: 09.5 09e1").tokens[2].tok, Float);
    assert_eq!(scan("x: 09.5 09e1").tokens[3].tok, Float);
}

#[test]
fn integer_literals() {
    assert_eq!(int_value("0"), Some(0));
    assert_eq!(int_value("42"), Some(42));
    assert_eq!(int_value("052"), Some(42));
    assert_eq!(int_value("0x2a"), Some(42));
    assert_eq!(int_value("0X2A"), Some(42));
    assert_eq!(int_value("1".repeat(50).as_str()), None);
}

#[test]
fn blanking_keeps_positions() {
    let text = "ab\u{e9} #\u{e9}\ncd\nef";
    let b = blank(text, std::iter::once(2..10));
    assert_eq!(b, "ab      \n d\nef");
    assert_eq!(b.len(), text.len());
    assert_eq!(blank(text, std::iter::empty()), text);
}

#[test]
fn suggestions() {
    assert_eq!(edit_distance("nmae", "name"), 1);
    assert_eq!(edit_distance("buffer", "buffers"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
}
