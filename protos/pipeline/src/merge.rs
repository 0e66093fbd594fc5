//! One definition per message: our schema and the upstream set are generated
//! as one schema (one Rust module per package), so a message both declare
//! (today the profiling building blocks: `profile_common.proto`'s messages
//! and `ProfilePacket`) must be emitted from exactly one of them. The one
//! that survives is the one with every field of the other (compared by
//! number, name, label, type and oneof, nested messages and enums
//! included); on equal definitions ours survives. When neither holds the
//! other, the run fails and a person decides: a field silently dropped
//! would change what some writer or reader sees.

use std::collections::{BTreeMap, BTreeSet};

use protozero_codegen::Schema;
use protozero_codegen::model::{EnumDef, MessageDef};

use crate::PipelineError;

/// Which source's definition of a message both declare is generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Winner {
    /// Ours (`protos/proto`).
    Ours,
    /// Upstream's (the pinned crate).
    Upstream,
}

/// Decides, for every top-level message both schemas declare, which
/// definition is generated; keyed by full name.
pub(crate) fn winners(
    ours: &Schema,
    upstream: &Schema,
) -> Result<BTreeMap<String, Winner>, PipelineError> {
    let upstream_messages: BTreeMap<&str, &MessageDef> = upstream
        .files
        .iter()
        .flat_map(|f| &f.messages)
        .map(|m| (m.full_name.as_str(), m))
        .collect();
    let mut out = BTreeMap::new();
    for ours_message in ours.files.iter().flat_map(|f| &f.messages) {
        let Some(theirs) = upstream_messages.get(ours_message.full_name.as_str()) else {
            continue;
        };
        let winner = if covers_message(ours_message, theirs) {
            Winner::Ours
        } else if covers_message(theirs, ours_message) {
            Winner::Upstream
        } else {
            return Err(PipelineError::Upstream(format!(
                "{} is declared by protos/proto and by upstream, and neither has every field of \
                 the other: make one complete",
                ours_message.full_name
            )));
        };
        out.insert(ours_message.full_name.clone(), winner);
    }
    // A top-level enum declared by both would be a second definition too.
    let upstream_enums: BTreeSet<&str> = upstream
        .files
        .iter()
        .flat_map(|f| &f.enums)
        .map(|e| e.full_name.as_str())
        .collect();
    if let Some(e) = ours
        .files
        .iter()
        .flat_map(|f| &f.enums)
        .find(|e| upstream_enums.contains(e.full_name.as_str()))
    {
        return Err(PipelineError::Upstream(format!(
            "enum {} is declared by protos/proto and by upstream",
            e.full_name
        )));
    }
    Ok(out)
}

/// One schema of both: our files, then upstream's, each message a
/// [`winners`] entry names kept only in its winner's file; a file left
/// with nothing to generate is dropped.
pub(crate) fn merge(
    mut ours: Schema,
    mut upstream: Schema,
    winners: &BTreeMap<String, Winner>,
) -> Schema {
    let keep = |schema: &mut Schema, side: Winner| {
        for file in &mut schema.files {
            file.messages
                .retain(|m| winners.get(&m.full_name).is_none_or(|w| *w == side));
        }
        schema.files.retain(|f| {
            !f.messages.is_empty()
                || !f.enums.is_empty()
                || !f.services.is_empty()
                || !f.extensions.is_empty()
        });
    };
    keep(&mut ours, Winner::Ours);
    keep(&mut upstream, Winner::Upstream);
    ours.files.append(&mut upstream.files);
    ours
}

/// Whether `a` declares every field, nested message and nested enum value
/// of `b`, alike.
fn covers_message(a: &MessageDef, b: &MessageDef) -> bool {
    let oneof =
        |m: &MessageDef, i: Option<usize>| i.and_then(|i| m.oneofs.get(i)).map(|o| o.name.clone());
    let fields = |m: &MessageDef| -> BTreeSet<String> {
        m.fields
            .iter()
            .map(|f| {
                format!(
                    "{} {} {:?} {:?} {:?}",
                    f.number,
                    f.name,
                    f.label,
                    f.ty,
                    oneof(m, f.oneof)
                )
            })
            .collect()
    };
    fields(a).is_superset(&fields(b))
        && b.messages.iter().all(|bn| {
            a.messages
                .iter()
                .find(|an| an.name == bn.name)
                .is_some_and(|an| covers_message(an, bn))
        })
        && b.enums.iter().all(|be| {
            a.enums
                .iter()
                .find(|ae| ae.name == be.name)
                .is_some_and(|ae| covers_enum(ae, be))
        })
}

/// Whether `a` declares every value of `b`.
fn covers_enum(a: &EnumDef, b: &EnumDef) -> bool {
    b.values.iter().all(|bv| {
        a.values
            .iter()
            .any(|av| av.name == bv.name && av.number == bv.number)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{OUR_PROTO_DIR, upstream_root};

    fn workspace_root() -> std::path::PathBuf {
        let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        manifest
            .ancestors()
            .nth(2)
            .unwrap_or(manifest)
            .to_path_buf()
    }

    /// The messages both sources declare today, and who wins each: ours
    /// for `profile_common.proto`'s (our `Frame` has `source_path_iid`,
    /// `line_number` and `kind`/`kind_str`, which upstream v51 lacks),
    /// ours for `ProfilePacket` (both alike).
    #[test]
    fn the_overlap_and_its_winners() {
        let ours = crate::ours::parse(&workspace_root().join(OUR_PROTO_DIR), false)
            .unwrap()
            .0;
        let upstream = crate::upstream_set::parse(&upstream_root().unwrap(), false).unwrap();
        let w = winners(&ours, &upstream).unwrap();
        let expected: BTreeMap<String, Winner> = [
            "AddressSymbols",
            "Callstack",
            "Frame",
            "InternedString",
            "Line",
            "Mapping",
            "ModuleSymbols",
            "ProfilePacket",
        ]
        .iter()
        .map(|n| (format!("perfetto.protos.{n}"), Winner::Ours))
        .collect();
        assert_eq!(w, expected);
        let frame = |s: &Schema| {
            s.files
                .iter()
                .flat_map(|f| &f.messages)
                .find(|m| m.name == "Frame")
                .cloned()
                .unwrap()
        };
        assert!(covers_message(&frame(&ours), &frame(&upstream)));
        assert!(!covers_message(&frame(&upstream), &frame(&ours)));
        let merged = merge(ours, upstream, &w);
        let mut names: Vec<&str> = merged
            .files
            .iter()
            .flat_map(|f| &f.messages)
            .map(|m| m.full_name.as_str())
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all, "a message generated twice");
        assert!(names.contains(&"perfetto.protos.PerfSample"));
    }

    #[test]
    fn neither_complete_is_refused() {
        let ours = crate::ours::parse(&workspace_root().join(OUR_PROTO_DIR), false)
            .unwrap()
            .0;
        let mut upstream = crate::upstream_set::parse(&upstream_root().unwrap(), false).unwrap();
        // Upstream grows a field of its own: ours lacks it, and upstream
        // still lacks ours' newer Frame fields.
        let frame = upstream
            .files
            .iter_mut()
            .flat_map(|f| &mut f.messages)
            .find(|m| m.name == "Frame")
            .unwrap();
        let mut extra = frame.fields[0].clone();
        extra.number = 99;
        extra.name = "only_upstream".into();
        frame.fields.push(extra);
        assert!(winners(&ours, &upstream).is_err());
    }

    #[test]
    fn the_complete_upstream_definition_wins() {
        let ours = crate::ours::parse(&workspace_root().join(OUR_PROTO_DIR), false)
            .unwrap()
            .0;
        let mut upstream = crate::upstream_set::parse(&upstream_root().unwrap(), false).unwrap();
        let packet = upstream
            .files
            .iter_mut()
            .flat_map(|f| &mut f.messages)
            .find(|m| m.name == "ProfilePacket")
            .unwrap();
        let mut extra = packet.fields[0].clone();
        extra.number = 99;
        extra.name = "only_upstream".into();
        packet.fields.push(extra);
        let w = winners(&ours, &upstream).unwrap();
        assert_eq!(w["perfetto.protos.ProfilePacket"], Winner::Upstream);
        assert_eq!(w["perfetto.protos.Frame"], Winner::Ours);
        let merged = merge(ours, upstream, &w);
        let declaring: Vec<&str> = merged
            .files
            .iter()
            .filter(|f| f.messages.iter().any(|m| m.name == "ProfilePacket"))
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(
            declaring,
            ["upstream/perfetto/trace/profiling/profile_packet.proto"]
        );
        // Our profile_packet.proto declared nothing else: it is dropped.
        assert!(
            !merged
                .files
                .iter()
                .any(|f| f.name == "perfetto/trace/profiling/profile_packet.proto")
        );
    }
}
