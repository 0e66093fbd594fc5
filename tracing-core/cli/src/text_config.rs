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
