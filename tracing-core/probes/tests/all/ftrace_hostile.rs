//! Hostile input to the page parser and the field decoder: arbitrary
//! bytes, and the recorded fixture pages with bytes overwritten, truncated
//! or given other layouts. Whatever comes in, the result is records or a
//! typed error, never a panic or an out-of-bounds read.

use crate::ftrace_common;

use ftrace_common::{Recording, fixture_dir};
use proptest::prelude::*;
use std::sync::OnceLock;
use zerotrace_probes::ftrace::{FormatTable, PageLayout};

/// The fixture recording, loaded once.
fn fixture() -> &'static (FormatTable, PageLayout, Vec<Vec<u8>>) {
    static F: OnceLock<(FormatTable, PageLayout, Vec<Vec<u8>>)> = OnceLock::new();
    F.get_or_init(|| {
        let rec = Recording::load(&fixture_dir()).expect("fixtures");
        let (table, layout) = rec.layout();
        let pages = rec
            .raw
            .iter()
            .flat_map(|cpu| cpu.chunks(layout.subbuf_size()).map(<[u8]>::to_vec))
            .collect();
        (table, layout, pages)
    })
}

/// Parses a page and decodes every field of every record; returns the
/// number of records read (errors end the walk, as a reader would).
fn walk(table: &FormatTable, layout: &PageLayout, bytes: &[u8]) -> usize {
    let Ok(page) = layout.parse(bytes) else {
        return 0;
    };
    let mut n = 0;
    for rec in page.records() {
        let Ok(rec) = rec else { break };
        n += 1;
        if let Ok(ev) = table.decode(&rec) {
            let _ = ev.pid();
            for (_, v) in ev.fields() {
                let _ = v;
            }
        }
    }
    n
}

#[test]
fn unmutated_fixture_pages_read_fully() {
    let (table, layout, pages) = fixture();
    let total: usize = pages.iter().map(|p| walk(table, layout, p)).sum();
    assert!(total > 1000, "{total}");
}

#[test]
fn every_truncation_of_every_fixture_page_is_safe() {
    let (table, layout, pages) = fixture();
    for page in pages.iter().take(4) {
        for len in 0..page.len() {
            walk(table, layout, &page[..len]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..5000)) {
        let (table, layout, _) = fixture();
        walk(table, layout, &bytes);
    }

    #[test]
    fn mutated_fixture_pages_never_panic(
        page_idx in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
        word_edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u32>()), 0..4),
    ) {
        let (table, layout, pages) = fixture();
        let mut page = page_idx.get(pages).clone();
        for (at, b) in edits {
            let i = at.index(page.len());
            page[i] = b;
        }
        // Whole-word edits reach event headers, array words and data_loc
        // words with values byte flips rarely make.
        for (at, w) in word_edits {
            let i = at.index(page.len() / 4) * 4;
            page[i..i + 4].copy_from_slice(&w.to_le_bytes());
        }
        walk(table, layout, &page);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// A mutated `format` or `header_page` file parses or gives a typed
    /// error; whatever layout it yields, pages read through it stay safe.
    #[test]
    fn mutated_format_files_never_panic(
        which in 0usize..64,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<char>()), 1..6),
    ) {
        let rec = Recording::load(&fixture_dir()).expect("fixtures");
        let (table, layout, pages) = fixture();
        let idx = which % (rec.formats.len() + 1);
        let mut text: Vec<char> = if idx == rec.formats.len() {
            rec.header_page.chars().collect()
        } else {
            rec.formats[idx].1.chars().collect()
        };
        for (at, c) in edits {
            let i = at.index(text.len());
            text[i] = if c.is_ascii_digit() || c == ';' || c == '\n' || c == '[' { c } else { char::from(b'0' + (c as u32 % 10) as u8) };
        }
        let text: String = text.into_iter().collect();
        if idx == rec.formats.len() {
            if let Ok(h) = zerotrace_probes::ftrace::HeaderPage::parse(&text) {
                let ct = table.common_type().expect("common_type");
                if let Ok(l) = PageLayout::new(&h, 4096, ct) {
                    walk(table, &l, &pages[0]);
                }
            }
        } else if let Ok(f) = zerotrace_probes::ftrace::EventFormat::parse(&text) {
            let mut t = FormatTable::new();
            if t.insert(f).is_ok() {
                for page in pages.iter().take(3) {
                    walk(&t, layout, page);
                }
            }
        }
    }
}
