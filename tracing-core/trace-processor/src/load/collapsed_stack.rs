//! Collapsed (folded) stacks, Brendan Gregg's flame graph input
//! (`main;work;leaf 42`: frames root first, separated by `;`, then a space
//! and a count), as Perfetto imports them: one aggregated profile
//! (`__intrinsic_aggregate_profile`, scope `collapsed_stack_file`, sample
//! type `samples` in unit `count`) made at the first line that is no
//! comment, every frame a frame of that name on the `[collapsed_stack]`
//! mapping, each stack a callsite (root at depth 0) and each line one
//! `__intrinsic_aggregate_sample` of its count. Lines starting with `#`
//! and empty lines are skipped; so is a line without a count, with a count
//! that is no positive integer or without a frame, as upstream skips it,
//! and counted (`collapsed_stack_malformed_line`). Read line by line as
//! the bytes arrive; a last line without a line break is read too.

use crate::error::TraceError;
use crate::parser::Parser;
use crate::storage::profiling_rows::{AggregateProfileRow, AggregateSampleRow};

use super::dummy_frames::DummyFrames;
use super::reader::FormatReader;
use super::text_lines::{Line, LineSplitter};

/// The stat of a line that is skipped.
const MALFORMED: &str = "collapsed_stack_malformed_line";

/// Lines that are no comment looked at to tell the format.
const SNIFFED_LINES: usize = 3;

/// The white space upstream trims (ASCII only).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

fn trim(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|&b| !is_space(b))
        .unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(start, |e| e + 1);
    line.get(start..end).unwrap_or(&[])
}

/// Whether a trimmed line that is no comment reads as a folded stack:
/// a `;` before its last space, and only digits after it.
fn is_stack_line(line: &[u8]) -> bool {
    let Some(space) = line.iter().rposition(|&b| b == b' ') else {
        return false;
    };
    let count = line.get(space + 1..).unwrap_or(&[]);
    space != 0
        && count.iter().all(u8::is_ascii_digit)
        && line.get(..space).is_some_and(|s| s.contains(&b';'))
}

/// Whether `head` opens collapsed stacks: its first lines that are no
/// comment (up to three) all read as folded stacks, and there is one. A
/// last line without a line break is looked at only when no whole line
/// was.
pub fn sniff(head: &[u8]) -> bool {
    let mut valid = 0;
    let mut rest = head;
    while valid < SNIFFED_LINES && !rest.is_empty() {
        let (line, ended) = match rest.iter().position(|&b| b == b'\n') {
            Some(nl) => {
                let line = rest.get(..nl).unwrap_or(&[]);
                rest = rest.get(nl + 1..).unwrap_or(&[]);
                (line, true)
            }
            None => {
                let line = rest;
                rest = &[];
                (line, false)
            }
        };
        let line = trim(line);
        if line.is_empty() || line.first() == Some(&b'#') {
            continue;
        }
        if !ended && valid > 0 {
            // Cut by the end of the bytes read: not looked at.
            break;
        }
        if !is_stack_line(line) {
            return false;
        }
        valid += 1;
    }
    valid > 0
}

/// The streaming reader of collapsed stacks.
#[derive(Debug, Default)]
pub struct CollapsedStackLoad {
    lines: LineSplitter,
    frames: DummyFrames,
    /// The profile and mapping, made at the first line that is no comment.
    profile: Option<(u32, u32)>,
}

impl CollapsedStackLoad {
    fn profile(&mut self, p: &mut Parser) -> (u32, u32) {
        if let Some(made) = self.profile {
            return made;
        }
        let s = &mut p.storage.strings;
        let row = AggregateProfileRow {
            scope: s.intern("collapsed_stack_file"),
            name: s.intern("collapsed_stack samples"),
            sample_type_type: s.intern("samples"),
            sample_type_unit: s.intern("count"),
        };
        let rows = &mut p.storage.profiling.aggregate_profiles;
        let id = u32::try_from(rows.len()).unwrap_or(u32::MAX);
        rows.push(row);
        let mapping = self.frames.mapping(p, "[collapsed_stack]");
        self.profile = Some((id, mapping));
        (id, mapping)
    }

    fn line(&mut self, p: &mut Parser, line: Line<'_>) {
        p.storage.work.step(1);
        let bytes = match line {
            Line::Text(b) => trim(b),
            Line::TooLong => {
                p.storage.stats.incr(MALFORMED);
                return;
            }
        };
        if bytes.is_empty() || bytes.first() == Some(&b'#') {
            return;
        }
        let (profile, mapping) = self.profile(p);
        let text = String::from_utf8_lossy(bytes);
        let parsed = text.rfind(' ').filter(|&s| s != 0).and_then(|s| {
            let count: i64 = text.get(s + 1..)?.parse().ok()?;
            (count > 0).then(|| (text.get(..s).unwrap_or(""), count))
        });
        let Some((stack, count)) = parsed else {
            p.storage.stats.incr(MALFORMED);
            return;
        };
        let mut callsite = None;
        let mut depth = 0u32;
        for name in stack.split(';').filter(|f| !f.is_empty()) {
            p.storage.work.step(1);
            let frame = self.frames.frame(p, mapping, name);
            callsite = Some(p.profiling.stacks.intern_callsite(
                &mut p.storage,
                callsite,
                frame,
                depth,
            ));
            depth = depth.saturating_add(1);
        }
        let Some(callsite_id) = callsite else {
            p.storage.stats.incr(MALFORMED);
            return;
        };
        p.storage
            .profiling
            .aggregate_samples
            .push(AggregateSampleRow {
                aggregate_profile_id: profile,
                callsite_id,
                value: count as f64,
            });
    }
}

impl FormatReader for CollapsedStackLoad {
    fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.push(data, |l| self.line(p, l));
        self.lines = lines;
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        self.lines
            .held_bytes()
            .saturating_add(self.frames.held_bytes())
    }

    fn finish(mut self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish(|l| self.line(p, l));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Loader;
    use crate::storage::Storage;

    fn load(text: &str, step: usize) -> Storage {
        let mut l = Loader::new();
        for c in text.as_bytes().chunks(step.max(1)) {
            l.push(c).expect("push");
        }
        l.finish().expect("finish")
    }

    /// Each sample: (frames root first, value).
    fn samples(st: &Storage) -> Vec<(Vec<String>, f64)> {
        let p = &st.profiling;
        p.aggregate_samples
            .iter()
            .map(|s| {
                let mut frames = Vec::new();
                let mut c = Some(s.callsite_id);
                while let Some(id) = c {
                    let cs = &p.callsites[id as usize];
                    let f = &p.frames[cs.frame_id as usize];
                    frames.push(st.strings.get(f.name).unwrap_or("").to_owned());
                    c = cs.parent_id;
                }
                frames.reverse();
                (frames, s.value)
            })
            .collect()
    }

    const TEXT: &str = "# a comment\nmain;foo;bar 100\n\nmain;foo;baz 50\r\nmain;qux 75";

    #[test]
    fn lines_become_aggregate_samples_of_one_profile() {
        let st = load(TEXT, TEXT.len());
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            samples(&st),
            vec![
                (s(&["main", "foo", "bar"]), 100.0),
                (s(&["main", "foo", "baz"]), 50.0),
                (s(&["main", "qux"]), 75.0),
            ]
        );
        let p = &st.profiling;
        assert_eq!(p.aggregate_profiles.len(), 1);
        let prof = &p.aggregate_profiles[0];
        let name = |id| st.strings.get(id).unwrap_or("");
        assert_eq!(
            (
                name(prof.scope),
                name(prof.name),
                name(prof.sample_type_type),
                name(prof.sample_type_unit)
            ),
            (
                "collapsed_stack_file",
                "collapsed_stack samples",
                "samples",
                "count"
            )
        );
        // One frame per name, roots at depth 0, on one mapping.
        assert_eq!(p.frames.len(), 5);
        assert_eq!(p.mappings.len(), 1);
        assert_eq!(name(p.mappings[0].name), "[collapsed_stack]");
        assert!(
            p.callsites
                .iter()
                .filter(|c| c.parent_id.is_none())
                .all(|c| c.depth == 0)
        );
        for step in [1, 3, 10] {
            assert_eq!(samples(&load(TEXT, step)), samples(&st), "step {step}");
        }
    }

    #[test]
    fn the_profile_views_weigh_each_stack_by_its_count() {
        use crate::profile_view::{Filter, Profile, folded};
        let profile = Profile::from_trace(TEXT.as_bytes()).expect("loads");
        let lines = folded(&profile, &Filter::default()).lines();
        assert_eq!(
            lines,
            vec!["main;foo;bar 100", "main;foo;baz 50", "main;qux 75"]
        );
    }

    #[test]
    fn malformed_lines_are_counted_and_skipped() {
        // Three good lines first: the format is told by them.
        let text = "a;b 1\na;c 2\na;d 3\nno_count\na;b 0\na;b -3\na;b x\n;; 4\n 5\na;c 2\n";
        let st = load(text, 4);
        assert_eq!(samples(&st).len(), 4);
        assert_eq!(st.stats.get(MALFORMED), 6);
    }

    #[test]
    fn the_format_is_told_by_its_first_lines() {
        assert!(sniff(b"# c\n\nmain;a 1\nmain;b 2\n"));
        assert!(sniff(b"main;a 1"));
        // A line cut by the end of the bytes read is not looked at.
        assert!(sniff(b"main;a 1\nmain;b"));
        assert!(!sniff(b"main;a 1\nmain b\n"));
        assert!(!sniff(b"main 1\n"));
        assert!(!sniff(b"# only a comment\n"));
        assert!(!sniff(b"a;b 1x\n"));
    }
}
