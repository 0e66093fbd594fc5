//! An unwound frame as the trace describes it: the unwinder
//! (`zerotrace-unwind`) gives a pc placed in its mapping with the loaded
//! ELF's facts, the trace wants Perfetto's `Mapping` fields and the frame's
//! `rel_pc` and name. And the frame that ends a stack the unwinder could
//! not finish: upstream's profilers append a synthetic frame named
//! `"ERROR <NAME>"`, with no mapping and `rel_pc` 0, below the frames they
//! recovered, so the trace says why the stack stops there.

use zerotrace_unwind::{Frame, FrameMapping, UnwindErrorKind};

use crate::intern::{FrameDesc, MappingDesc};

/// A frame's mapping as the trace describes it: the build id, the mapped
/// file's path, the range and the offsets libunwindstack reports.
pub fn mapping_desc(m: &FrameMapping) -> MappingDesc {
    MappingDesc {
        build_id: m.build_id().map(<[u8]>::to_vec).unwrap_or_default(),
        path: String::from_utf8_lossy(&m.mapping.name).into_owned(),
        start: m.mapping.start,
        end: m.mapping.end,
        exact_offset: m.exact_offset(),
        start_offset: m.start_offset(),
        load_bias: m.load_bias(),
    }
}

/// An unwound frame as the trace describes it, named `function` (`None`:
/// not symbolized); a frame outside every mapping gets the empty mapping.
pub fn frame_desc(f: &Frame, function: Option<String>) -> FrameDesc {
    FrameDesc {
        mapping: f
            .mapping
            .as_deref()
            .map_or_else(MappingDesc::default, mapping_desc),
        rel_pc: f.rel_pc,
        function,
    }
}

/// The synthetic frame that ends a stack unwinding stopped on with `kind`
/// (no mapping, `rel_pc` 0, named `"ERROR <NAME>"`); `None` for a stack
/// walked to its root.
pub fn error_frame(kind: UnwindErrorKind) -> Option<FrameDesc> {
    kind.error_frame_name().map(|name| FrameDesc {
        mapping: MappingDesc::default(),
        rel_pc: 0,
        function: Some(name.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_frame_names_the_error_and_nothing_else() {
        assert!(error_frame(UnwindErrorKind::None).is_none());
        let f = error_frame(UnwindErrorKind::InvalidMap).expect("an error frame");
        assert_eq!(f.function.as_deref(), Some("ERROR INVALID_MAP"));
        assert_eq!((f.rel_pc, f.mapping), (0, MappingDesc::default()));
        for kind in UnwindErrorKind::ALL {
            assert_eq!(error_frame(kind).is_some(), kind != UnwindErrorKind::None);
        }
    }

    #[test]
    fn a_frame_outside_every_mapping_has_the_empty_mapping() {
        let f = Frame {
            pc: 0x1234,
            rel_pc: 0x1234,
            mapping: None,
        };
        let d = frame_desc(&f, Some("f".to_owned()));
        assert_eq!(d.mapping, MappingDesc::default());
        assert_eq!((d.rel_pc, d.function.as_deref()), (0x1234, Some("f")));
    }

    #[test]
    fn a_mapping_without_a_module_is_its_maps_line() {
        let line = b"7f0000001000-7f0000003000 r-xp 00002000 08:01 42 /usr/lib/libc.so.6";
        let m = FrameMapping::new(
            zerotrace_unwind::parse_line(line, 1).expect("a maps line"),
            None,
        );
        let d = mapping_desc(&m);
        assert_eq!(d.path, "/usr/lib/libc.so.6");
        assert_eq!((d.start, d.end), (0x7f00_0000_1000, 0x7f00_0000_3000));
        assert_eq!(
            (d.exact_offset, d.start_offset, d.load_bias),
            (0x2000, 0, 0)
        );
        assert!(d.build_id.is_empty());
    }
}
