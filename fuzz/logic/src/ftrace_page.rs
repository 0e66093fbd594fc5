//! The ftrace raw-page parser of `zerotrace-probes` over hostile pages: the
//! input picks a page header layout (64- or 32-bit commit word) and a
//! sub-buffer size, optionally replaces one event's `format` file with its
//! own text, and the rest is one raw page as `trace_pipe_raw` would hand it
//! out. The formats are the ones recorded with the probes' fixtures.
//!
//! Invariants: no panic; every record's payload lies inside the page's
//! committed data, and every string or array value a field decodes to lies
//! inside its record's payload; the page cut right after its committed data
//! (and stored missed-events count) reads as the same records.

use zerotrace_probes::ftrace::{
    EventFormat, FormatTable, HeaderField, HeaderPage, PageLayout, Value,
};

use crate::support::Cursor;

/// The fixture formats the records are decoded with.
const FORMATS: &[&str] = &[
    include_str!(
        "../../../tracing-core/probes/tests/fixtures/ftrace/events/sched/sched_switch/format"
    ),
    include_str!(
        "../../../tracing-core/probes/tests/fixtures/ftrace/events/sched/sched_waking/format"
    ),
    include_str!(
        "../../../tracing-core/probes/tests/fixtures/ftrace/events/sched/sched_process_fork/format"
    ),
    include_str!("../../../tracing-core/probes/tests/fixtures/ftrace/events/ftrace/print/format"),
    include_str!(
        "../../../tracing-core/probes/tests/fixtures/ftrace/events/raw_syscalls/sys_enter/format"
    ),
    include_str!(
        "../../../tracing-core/probes/tests/fixtures/ftrace/events/irq/irq_handler_entry/format"
    ),
];

/// Whether `inner` lies inside `outer` (same allocation, by address).
fn inside(inner: &[u8], outer: &[u8]) -> bool {
    let o = outer.as_ptr() as usize;
    let i = inner.as_ptr() as usize;
    inner.is_empty() || (i >= o && i + inner.len() <= o + outer.len())
}

/// The bytes a page used and its records as `(timestamp, id, payload)`.
type Walked<'a> = (usize, Vec<(u64, u32, &'a [u8])>);

/// Walks a page: `(timestamp, id, payload)` of each record until the end or
/// the first error, checking the bounds invariants on the way.
fn walk<'a>(layout: &PageLayout, table: &FormatTable, bytes: &'a [u8]) -> Option<Walked<'a>> {
    let page = layout.parse(bytes).ok()?;
    assert!(inside(page.data, bytes));
    let mut out = Vec::new();
    for rec in page.records() {
        let Ok(rec) = rec else { break };
        assert!(inside(rec.payload, page.data), "payload outside the commit");
        if let Ok(ev) = table.decode(&rec) {
            let _ = ev.pid();
            for (_, v) in ev.fields() {
                if let Ok(Value::Str(b) | Value::Bytes(b)) = v {
                    assert!(inside(b, rec.payload), "value outside its payload");
                }
            }
        }
        out.push((rec.timestamp, rec.id, rec.payload));
    }
    let used = page.used;
    Some((used, out))
}

/// The `ftrace_page` target.
pub fn ftrace_page(data: &[u8]) {
    let mut c = Cursor(data);
    let (Some(shape), Some(size)) = (c.byte(), c.byte()) else {
        return;
    };
    let long = shape & 1 == 0;
    let header = HeaderPage {
        timestamp: HeaderField { offset: 0, size: 8 },
        commit: HeaderField {
            offset: 8,
            size: if long { 8 } else { 4 },
        },
        overwrite: Some(HeaderField { offset: 8, size: 1 }),
        data: HeaderField {
            offset: if long { 16 } else { 12 },
            size: 4080,
        },
    };
    let subbuf = match size % 4 {
        0 => 4096,
        1 => 8192,
        2 => 64,
        _ => 20,
    };
    let mut table = FormatTable::new();
    for (i, text) in FORMATS.iter().enumerate() {
        // Optionally one format comes from the input instead.
        let own;
        let text = if shape & 2 != 0 && (usize::from(shape >> 2) % FORMATS.len()) == i {
            own = String::from_utf8_lossy(c.piece()).into_owned();
            own.as_str()
        } else {
            text
        };
        if let Ok(f) = EventFormat::parse(text) {
            let _ = table.insert(f);
        }
    }
    let Some(common_type) = table.common_type().cloned() else {
        return;
    };
    let Ok(layout) = PageLayout::new(&header, subbuf, &common_type) else {
        return;
    };
    let page = c.bytes(usize::MAX);
    let Some((used, records)) = walk(&layout, &table, page) else {
        return;
    };
    // The page cut right after what it uses reads the same.
    let (_, again) = walk(&layout, &table, &page[..used]).expect("the cut page parses");
    assert_eq!(
        records, again,
        "a page cut after its commit reads differently"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each committed seed reaches the record walk and yields records, so
    /// the fuzzer starts from pages that parse.
    #[test]
    fn seeds_reach_records() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/ftrace_page");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).expect("seeds") {
            let data = std::fs::read(entry.expect("entry").path()).expect("seed");
            let long = data[0] & 1 == 0;
            let header = HeaderPage {
                timestamp: HeaderField { offset: 0, size: 8 },
                commit: HeaderField {
                    offset: 8,
                    size: if long { 8 } else { 4 },
                },
                overwrite: None,
                data: HeaderField {
                    offset: if long { 16 } else { 12 },
                    size: 4080,
                },
            };
            let mut table = FormatTable::new();
            let mut page = &data[2..];
            if data[0] & 2 != 0 {
                let n = usize::from(data[2]);
                let f = EventFormat::parse(std::str::from_utf8(&data[3..3 + n]).expect("utf8"))
                    .expect("own format");
                table.insert(f).expect("insert");
                page = &data[3 + n..];
            } else {
                for text in FORMATS {
                    table
                        .insert(EventFormat::parse(text).expect("format"))
                        .expect("insert");
                }
            }
            let ct = table.common_type().expect("common_type").clone();
            let layout = PageLayout::new(&header, 4096, &ct).expect("layout");
            let (_, records) = walk(&layout, &table, page).expect("page parses");
            assert!(!records.is_empty());
            seen += 1;
        }
        assert_eq!(seen, 4);
    }
}
