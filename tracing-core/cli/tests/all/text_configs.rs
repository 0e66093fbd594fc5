//! The text-config corpus, `tracing-core/tests/configs/`: every `.pbtxt`
//! file there is parsed by `zerotrace_cli::text_config::parse` and encoded
//! by `protoc --encode` against Perfetto's upstream schema (v51, the
//! `perfetto_protos` crate build.rs compiles), and the two encodings must
//! be the same, field for field (decoded and compared as messages) and
//! byte for byte.
//!
//! The files in `configs/newer/` use fields Perfetto added after v51: the
//! upstream `protoc` must refuse them, and our encoding must carry every
//! field with its number, as `protoc` over our own schema (`protos/proto`)
//! encodes it.

use crate::upstream;

use std::path::{Path, PathBuf};

use prost::Message;
use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use upstream::upstream_root;
use zerotrace_cli::{schema, text_config};

const TRACE_CONFIG_TYPE: &str = "perfetto.protos.TraceConfig";

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus_dir() -> PathBuf {
    manifest_dir().join("../tests/configs")
}

/// `protoc --encode=perfetto.protos.TraceConfig -I<root> <proto>` of `text`.
fn protoc_encode(root: &Path, proto: &str, text: &str) -> Result<Vec<u8>, String> {
    upstream::protoc_encode(root, proto, TRACE_CONFIG_TYPE, text)
}

/// The `.pbtxt` files of `dir`, sorted.
fn configs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "pbtxt"))
        .collect();
    files.sort();
    files
}

fn decode(bytes: &[u8]) -> DynamicMessage {
    DynamicMessage::decode(schema::trace_config(), bytes).expect("a TraceConfig")
}

/// The first difference between two messages, as the path of the field
/// and both values (`None` if they are equal).
fn diff(path: &str, ours: &DynamicMessage, theirs: &DynamicMessage) -> Option<String> {
    for field in ours.descriptor().fields() {
        let p = if path.is_empty() {
            field.name().to_owned()
        } else {
            format!("{path}.{}", field.name())
        };
        match (ours.has_field(&field), theirs.has_field(&field)) {
            (false, false) => continue,
            (true, false) => return Some(format!("{p}: set by us only")),
            (false, true) => return Some(format!("{p}: set by protoc only")),
            (true, true) => {}
        }
        let d = diff_value(&p, &ours.get_field(&field), &theirs.get_field(&field));
        if d.is_some() {
            return d;
        }
    }
    let unknown = |m: &DynamicMessage| m.unknown_fields().count();
    if unknown(ours) + unknown(theirs) > 0 {
        return Some(format!(
            "{path}: fields our schema does not know: {} in ours, {} in protoc's",
            unknown(ours),
            unknown(theirs)
        ));
    }
    None
}

fn diff_value(path: &str, ours: &Value, theirs: &Value) -> Option<String> {
    match (ours, theirs) {
        (Value::Message(a), Value::Message(b)) => diff(path, a, b),
        (Value::List(a), Value::List(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| diff_value(&format!("{path}[{i}]"), x, y)),
        _ if ours == theirs => None,
        _ => Some(format!("{path}: ours {ours:?}, protoc's {theirs:?}")),
    }
}

/// Parses `file` with our parser and checks the result against `protoc`'s
/// encoding of the same text; returns our message.
fn check_against(root: &Path, proto: &str, file: &Path) -> DynamicMessage {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).expect("read the config");
    let ours = match text_config::parse(&name, &text) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let theirs =
        protoc_encode(root, proto, &text).unwrap_or_else(|e| panic!("protoc refuses {name}:\n{e}"));
    let (a, b) = (decode(&ours), decode(&theirs));
    if let Some(d) = diff("", &a, &b) {
        panic!("{name}: {d}");
    }
    assert_eq!(a, b, "{name}");
    assert_eq!(ours, theirs, "{name}: same fields, different bytes");
    // Our text form of it reads back to the same message.
    let again = text_config::to_text(schema::trace_config(), &ours).expect("decode");
    match text_config::parse(&name, &again) {
        Ok(b) => assert_eq!(b, ours, "{name}: the text form does not round-trip"),
        Err(e) => panic!("{name}: our text form does not parse:\n{e}\n{again}"),
    }
    a
}

#[test]
fn corpus_matches_protoc_against_upstream_v51() {
    let root = upstream_root();
    let files = configs(&corpus_dir());
    assert!(files.len() >= 12, "the corpus has {} files", files.len());
    let mut parsed = Vec::new();
    for file in &files {
        let msg = check_against(&root, "protos/perfetto/config/trace_config.proto", file);
        // Non-trivial: each config sets buffers and data sources (or
        // producers) and encodes to something.
        assert!(msg.encoded_len() > 8, "{}", file.display());
        parsed.push(msg);
    }
    covers_the_documented_features(&parsed);
    covers_the_grammar(&files);
}

/// What a value covering a feature must be.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// Anything (the field is set).
    Set,
    /// This enum number.
    Enum(i32),
    /// This unsigned number.
    U32(u32),
    /// `true`.
    True,
    /// This string.
    Str(&'static str),
    /// A negative integer.
    Negative,
}

impl Want {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Want::Set => true,
            Want::Enum(n) => v.as_enum_number() == Some(n),
            Want::U32(n) => v.as_u32() == Some(n),
            Want::True => v.as_bool() == Some(true),
            Want::Str(s) => v.as_str() == Some(s),
            Want::Negative => v
                .as_i64()
                .or(v.as_i32().map(i64::from))
                .is_some_and(|n| n < 0),
        }
    }
}

/// Whether some value at `path` (dot-separated field names, through
/// repeated messages) of `msg` is what `want` says.
fn any_at(msg: &DynamicMessage, path: &str, want: Want) -> bool {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    if !msg.has_field_by_name(head) {
        return false;
    }
    let Some(value) = msg.get_field_by_name(head) else {
        return false;
    };
    let values: Vec<Value> = match value.as_ref() {
        Value::List(l) => l.clone(),
        v => vec![v.clone()],
    };
    values.iter().any(|v| match (rest, v) {
        (None, v) => want.accepts(v),
        (Some(r), Value::Message(m)) => any_at(m, r, want),
        _ => false,
    })
}

/// The corpus covers the settings of the configs in Perfetto's
/// documentation (each feature: some config sets the field as wanted).
fn covers_the_documented_features(msgs: &[DynamicMessage]) {
    const DS: &str = "data_sources.config";
    let features: &[(&str, &str, Want)] = &[
        ("ftrace events", "ftrace_config.ftrace_events", Want::Set),
        (
            "atrace categories",
            "ftrace_config.atrace_categories",
            Want::Set,
        ),
        ("process stats", "process_stats_config", Want::Set),
        (
            "sys stats counters",
            "sys_stats_config.meminfo_counters",
            Want::Set,
        ),
        (
            "track_event categories",
            "track_event_config.enabled_categories",
            Want::Set,
        ),
        (
            "disabled categories",
            "track_event_config.disabled_categories",
            Want::Set,
        ),
        (
            "track_event tags",
            "track_event_config.enabled_tags",
            Want::Set,
        ),
        (
            "disabled tags",
            "track_event_config.disabled_tags",
            Want::Set,
        ),
        (
            "heapprofd",
            "heapprofd_config.sampling_interval_bytes",
            Want::Set,
        ),
        (
            "heapprofd dumps",
            "heapprofd_config.continuous_dump_config",
            Want::Set,
        ),
        ("heapprofd by name", "name", Want::Str("android.heapprofd")),
        ("java heap dumps", "java_hprof_config", Want::Set),
        (
            "perf callstacks",
            "perf_event_config.callstack_sampling",
            Want::Set,
        ),
        ("a third buffer", "target_buffer", Want::U32(2)),
    ];
    let session: &[(&str, &str, Want)] = &[
        ("a ring buffer", "buffers.fill_policy", Want::Enum(1)),
        ("a discard buffer", "buffers.fill_policy", Want::Enum(2)),
        ("write_into_file", "write_into_file", Want::True),
        ("the file write period", "file_write_period_ms", Want::Set),
        ("producers", "producers.shm_size_kb", Want::Set),
        (
            "producer filters",
            "data_sources.producer_name_filter",
            Want::Set,
        ),
        (
            "a stop trigger",
            "trigger_config.trigger_mode",
            Want::Enum(2),
        ),
        (
            "a start trigger",
            "trigger_config.trigger_mode",
            Want::Enum(1),
        ),
        (
            "a trigger delay",
            "trigger_config.triggers.stop_delay_ms",
            Want::Set,
        ),
        (
            "a trigger probability",
            "trigger_config.triggers.skip_probability",
            Want::Set,
        ),
        (
            "incremental state",
            "incremental_state_config.clear_period_ms",
            Want::Set,
        ),
        (
            "builtin data sources",
            "builtin_data_sources.primary_trace_clock",
            Want::Set,
        ),
        (
            "a negative int64",
            "statsd_metadata.triggering_alert_id",
            Want::Negative,
        ),
        ("a negative int32", "bugreport_score", Want::Negative),
        ("a duration", "duration_ms", Want::Set),
    ];
    let data_source_paths: Vec<(&str, String, Want)> = features
        .iter()
        .map(|&(what, path, want)| (what, format!("{DS}.{path}"), want))
        .collect();
    let all = data_source_paths
        .iter()
        .map(|(w, p, want)| (*w, p.as_str(), *want))
        .chain(session.iter().copied());
    for (what, path, want) in all {
        assert!(
            msgs.iter().any(|m| any_at(m, path, want)),
            "no config of the corpus covers {what} ({path}: {want:?})"
        );
    }
}

/// The corpus, as text, uses every construct of the grammar somewhere
/// (each one: some file contains the snippet).
fn covers_the_grammar(files: &[PathBuf]) {
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("read"))
        .collect();
    let constructs = [
        ("a message without colon", "buffers {"),
        ("a message with colon", "buffers: {"),
        ("angle brackets", "buffers <"),
        ("a comment", "# "),
        ("a ';' separator", ";\n"),
        ("a ',' separator", ", fill_policy"),
        ("a list of strings", ": [\""),
        ("a list of enums", ": [MEMINFO"),
        ("a list of messages", ": [\n  {"),
        ("a hex integer", ": 0x"),
        ("an octal integer", ": 01"),
        ("a negative integer", ": -4"),
        ("a negative hex integer", ": -0x"),
        ("an exponent", "e-1"),
        ("a float without integer part", ": .5"),
        ("an enum by number", "fill_policy: 2"),
        ("a single-quoted string", ": 'verbose'"),
        ("concatenated strings", "\"launch\" \"_\""),
        ("an escape", "\\t"),
        ("an octal escape", "\\052"),
    ];
    for (what, snippet) in constructs {
        assert!(
            texts.iter().any(|t| t.contains(snippet)),
            "no config of the corpus uses {what} ({snippet:?})"
        );
    }
}

#[test]
fn newer_fields_are_encoded_with_their_numbers() {
    let root = upstream_root();
    let ours_root = manifest_dir().join("../../protos/proto");
    let files = configs(&corpus_dir().join("newer"));
    assert!(!files.is_empty());
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        // Upstream v51 does not know them...
        let refused = protoc_encode(&root, "protos/perfetto/config/trace_config.proto", &text)
            .expect_err("upstream v51 accepts a config of newer fields");
        assert!(refused.contains("has no field named"), "{refused}");
        // ...our schema does, and we encode them as protoc does over it.
        check_against(&ours_root, "perfetto/config/trace_config.proto", file);
    }
    // The numbers, read back from our encoding of the first file.
    let text = std::fs::read_to_string(&files[0]).expect("read");
    let msg = decode(&text_config::parse("newer", &text).expect("parses"));
    let number = |m: &DynamicMessage, n: u32| m.has_field_by_number(n);
    let sub = |m: &DynamicMessage, n: u32| -> DynamicMessage {
        match m.get_field_by_number(n).expect("set").as_ref() {
            Value::Message(x) => x.clone(),
            Value::List(l) => l[0].as_message().expect("messages").clone(),
            v => panic!("field {n} is {v:?}"),
        }
    };
    // TraceConfig: exclusive_prio 41, trace_all_machines 43,
    // write_flush_mode 44, fflush_post_write 45, compression 47,
    // priority_boost 40.
    for n in [40, 41, 43, 44, 45, 47] {
        assert!(number(&msg, n), "TraceConfig field {n}");
    }
    assert_eq!(
        msg.get_field_by_number(44).unwrap().as_enum_number(),
        Some(3)
    );
    assert_eq!(
        msg.get_field_by_number(45).unwrap().as_enum_number(),
        Some(2)
    );
    // BufferConfig.name 7.
    assert_eq!(
        sub(&msg, 1).get_field_by_number(7).unwrap().as_str(),
        Some("events")
    );
    // DataSourceConfig: target_buffer_name 11, priority_boost 10;
    // TrackEventConfig.thread_time_subsampling_ns 10.
    let config = sub(&sub(&msg, 2), 1);
    assert_eq!(
        config.get_field_by_number(11).unwrap().as_str(),
        Some("events")
    );
    assert!(number(&config, 10));
    assert_eq!(
        sub(&config, 113).get_field_by_number(10).unwrap().as_u64(),
        Some(1_000_000)
    );
    // CompressionConfig.zstd 2 . level 1.
    assert_eq!(
        sub(&sub(&msg, 47), 2)
            .get_field_by_number(1)
            .unwrap()
            .as_i32(),
        Some(-3)
    );
}

#[test]
fn diff_names_the_first_differing_field() {
    let msg = |t: &str| decode(&text_config::parse("d", t).expect("parses"));
    let a = msg("duration_ms: 1 buffers { size_kb: 2 } buffers { size_kb: 5 }");
    let b = msg("duration_ms: 1 buffers { size_kb: 2 } buffers { size_kb: 6 }");
    let c = msg("duration_ms: 1 buffers { size_kb: 2 } buffers { }");
    assert_eq!(diff("", &a, &a), None);
    assert_eq!(
        diff("", &a, &b).as_deref(),
        Some("buffers[1].size_kb: ours U32(5), protoc's U32(6)")
    );
    assert_eq!(
        diff("", &a, &c).as_deref(),
        Some("buffers[1].size_kb: set by us only")
    );
    assert!(diff("", &a, &msg("duration_ms: 1")).is_some());
}

#[test]
fn errors_in_a_corpus_file_name_it_and_point_at_the_line() {
    // A corpus config with one mistake, the kind an edit makes.
    let file = corpus_dir().join("linux_sched_and_process_stats.pbtxt");
    let text = std::fs::read_to_string(&file).expect("read");
    let broken = text.replacen("drain_period_ms: 250", "drain_period_ms: 250ms", 1);
    let e = text_config::parse("linux_sched_and_process_stats.pbtxt", &broken).unwrap_err();
    let line = text
        .lines()
        .position(|l| l.contains("drain_period_ms"))
        .unwrap()
        + 1;
    assert_eq!(e.line, line, "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("linux_sched_and_process_stats.pbtxt:{line}:")),
        "{e}"
    );
    // protoc refuses it too.
    assert!(
        protoc_encode(
            &upstream_root(),
            "protos/perfetto/config/trace_config.proto",
            &broken
        )
        .is_err()
    );
}

/// Single constructs, at the edges of the grammar, accepted or refused by
/// us as by `protoc`, and encoded alike.
#[test]
fn edge_cases_agree_with_protoc() {
    let root = upstream_root();
    let dummy = |fields: &str| {
        format!("data_sources {{ config {{ for_testing {{ dummy_fields {{ {fields} }} }} }} }}")
    };
    let good = [
        dummy("field_int32: -0x80000000 field_sint64: -0777 field_sfixed32: - 1"),
        dummy("field_uint64: 0xffffffffffffffff field_fixed64: 0 field_fixed32: 037777777777"),
        dummy("field_double: -inf field_float: 1E3 field_int64: -9223372036854775808"),
        dummy("field_double: 10 field_float: 2.f"),
        dummy(r#"field_bytes: "\377\x00\u00ff" field_string: 'a' "b" 'c'"#),
        "buffers { fill_policy: 0 } buffers { fill_policy: 0x2 }".into(),
        "buffers: [] duration_ms: 0".into(),
        "enable_extra_guardrails: t deferred_start: False notify_traceur: 1".into(),
        "buffers {} ; buffers <> , duration_ms: 1".into(),
        "# only a comment".into(),
        "".into(),
    ];
    for text in &good {
        let ours = text_config::parse("edge", text).unwrap_or_else(|e| panic!("{e}"));
        let theirs = protoc_encode(&root, "protos/perfetto/config/trace_config.proto", text)
            .unwrap_or_else(|e| panic!("protoc refuses {text}: {e}"));
        assert_eq!(ours, theirs, "{text}");
    }
    let bad = [
        dummy("field_int32: 0x80000000"),
        dummy("field_uint32: -1"),
        dummy("field_double: 0x10"),
        dummy("field_double: 010"),
        dummy("field_string: abc"),
        dummy(r#"field_string: "unterminated"#),
        dummy(r#"field_string: "bad \q escape""#),
        "buffers { fill_policy: 3 }".into(),
        "buffers { fill_policy: RING }".into(),
        "duration_ms: 09".into(),
        "duration_ms: 1.0".into(),
        "duration_ms: [1]".into(),
        "duration_ms: 1 duration_ms: 2".into(),
        "enable_extra_guardrails: 2".into(),
        "buffers { size_kb: 1 ".into(),
        "buffers { size_kb: 1 } }".into(),
        "buffers: [{}, ]".into(),
        "duration_ms: 1;;".into(),
        "no_such_field: 1".into(),
    ];
    for text in &bad {
        assert!(
            text_config::parse("edge", text).is_err(),
            "we accept {text}"
        );
        assert!(
            protoc_encode(&root, "protos/perfetto/config/trace_config.proto", text).is_err(),
            "protoc accepts {text}"
        );
    }
}

/// Small deterministic pseudo-random numbers (xorshift64).
struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Corpus configs with a few random edits (characters deleted, or tokens
/// and stray punctuation inserted) must be accepted or refused by us as by
/// `protoc` over upstream v51, and when accepted, encoded to the same
/// bytes. `ZEROTRACE_TEXT_CONFIG_MUTATIONS` sets how many (200 by default;
/// 4000 agreed when this was written).
#[test]
fn mutated_corpus_agrees_with_protoc() {
    let rounds: usize = std::env::var("ZEROTRACE_TEXT_CONFIG_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let root = upstream_root();
    let files = configs(&corpus_dir());
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("read"))
        .collect();
    let inserts = [
        "-", "0", "0x", "09", "07", "8", "-1", "2", "1e5", ".5", "inf", "x", "f", "DISCARD", ".",
        ",", ";", ":", "{", "}", "[", "]", "<", ">", "\"", "'", "\\", "#", "\n", " ",
    ];
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    let (mut accepted, mut refused) = (0, 0);
    for round in 0..rounds {
        let mut text = texts[round % texts.len()].clone();
        for _ in 0..1 + rng.below(2) {
            let mut at = rng.below(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            if rng.below(3) == 0 {
                let mut end = (at + 1 + rng.below(3)).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                text.replace_range(at..end, "");
            } else {
                text.insert_str(at, inserts[rng.below(inserts.len())]);
            }
        }
        let ours = text_config::parse("mutated", &text);
        let theirs = protoc_encode(&root, "protos/perfetto/config/trace_config.proto", &text);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) if a == b => accepted += 1,
            (Err(_), Err(_)) => refused += 1,
            _ => panic!(
                "round {round}, from {}: we and protoc disagree on\n{text}\n\
                 ours: {ours:?}\nprotoc: {theirs:?}",
                files[round % files.len()].display()
            ),
        }
    }
    // Both outcomes are exercised.
    assert!(
        accepted * 10 >= rounds && refused * 10 >= rounds,
        "{accepted} accepted, {refused} refused"
    );
}
