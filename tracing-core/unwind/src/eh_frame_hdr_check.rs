//! Whether a module's `.eh_frame_hdr` search table may be handed to
//! `framehop`. It finds a pc's FDE by a binary search of that table and
//! turns the entry's FDE address into an `.eh_frame` offset by subtracting
//! the header's `eh_frame_ptr`, unchecked in `gimli` (a hostile file whose
//! entry points below `.eh_frame` panics where overflow checks are on, and
//! reads a wrapped offset where they are off); a stated entry count larger
//! than the table makes its search multiply past `u64`.
//!
//! So the table is read through once, when the module is loaded, with the
//! section bases `framehop` uses: the header must parse, `eh_frame_ptr` and
//! every entry must be direct pointers, every FDE address must fall inside
//! `.eh_frame`, and the stated count of entries must be present. A table
//! that fails is dropped, and `framehop` indexes `.eh_frame` itself (slower
//! to build, the same rules), so a bad header costs speed, never a sample.

use std::ops::Range;

use gimli::{BaseAddresses, EhFrameHdr, LittleEndian};

use super::section_data::SectionData;

/// Whether `hdr`'s search table is safe to search (see the module doc).
/// `text` and `got` are the module's `.text` and `.got` ranges, the other
/// bases an encoded pointer may be relative to.
pub(crate) fn table_is_sound(
    hdr: &SectionData,
    eh_frame: &SectionData,
    text: Option<&Range<u64>>,
    got: Option<&Range<u64>>,
) -> bool {
    let bases = BaseAddresses::default()
        .set_eh_frame(eh_frame.svma.start)
        .set_eh_frame_hdr(hdr.svma.start)
        .set_text(text.map_or(0, |r| r.start))
        .set_got(got.map_or(0, |r| r.start));
    let Ok(parsed) = EhFrameHdr::new(&hdr.data, LittleEndian).parse(&bases, 8) else {
        return false;
    };
    let Ok(eh_frame_ptr) = parsed.eh_frame_ptr().direct() else {
        return false;
    };
    let Some(table) = parsed.table() else {
        // No table: `framehop` finds no FDE through it and says so.
        return true;
    };
    let eh_frame_len = eh_frame.data.len() as u64;
    let mut entries = table.iter(&bases);
    loop {
        match entries.next() {
            Ok(None) => return true,
            Ok(Some((start, fde))) => {
                let (Ok(_), Ok(fde)) = (start.direct(), fde.direct()) else {
                    return false;
                };
                match fde.checked_sub(eh_frame_ptr) {
                    Some(offset) if offset < eh_frame_len => {}
                    _ => return false,
                }
            }
            // Fewer entries than stated, or an encoding it cannot read.
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A header (version 1; eh_frame_ptr pcrel|sdata4; fde_count udata4;
    /// table datarel|sdata4) whose eh_frame_ptr says `.eh_frame` is at
    /// 0x2000, with the given (start, fde) entries and stated count.
    fn hdr(count: u32, entries: &[(i32, i32)]) -> SectionData {
        let svma = 0x1000u64;
        let mut b = vec![1, 0x1b, 0x03, 0x3b];
        // pcrel: relative to the field's own address (svma + 4).
        b.extend_from_slice(&((0x2000i64 - (svma as i64 + 4)) as i32).to_le_bytes());
        b.extend_from_slice(&count.to_le_bytes());
        for (start, fde) in entries {
            // datarel: relative to the header's start.
            b.extend_from_slice(&start.to_le_bytes());
            b.extend_from_slice(&fde.to_le_bytes());
        }
        SectionData {
            svma: svma..svma + b.len() as u64,
            data: Arc::from(b),
        }
    }

    fn eh_frame() -> SectionData {
        SectionData {
            svma: 0x2000..0x2100,
            data: Arc::from(vec![0u8; 0x100]),
        }
    }

    #[test]
    fn a_table_inside_eh_frame_is_sound() {
        let h = hdr(2, &[(0x10, 0x1000), (0x20, 0x1080)]);
        assert!(table_is_sound(&h, &eh_frame(), None, None));
        assert!(table_is_sound(&hdr(0, &[]), &eh_frame(), None, None));
    }

    #[test]
    fn an_fde_before_or_past_eh_frame_is_refused() {
        // 0x1000 + 0xff0 = 0x1ff0, below eh_frame_ptr 0x2000: gimli's
        // unchecked subtraction.
        assert!(!table_is_sound(
            &hdr(1, &[(0, 0xff0)]),
            &eh_frame(),
            None,
            None
        ));
        assert!(!table_is_sound(
            &hdr(1, &[(0, 0x1100)]),
            &eh_frame(),
            None,
            None
        ));
    }

    #[test]
    fn a_count_beyond_the_table_or_a_bad_header_is_refused() {
        assert!(!table_is_sound(
            &hdr(u32::MAX, &[(0, 0x1000)]),
            &eh_frame(),
            None,
            None
        ));
        let mut bad = hdr(1, &[(0, 0x1000)]);
        bad.data = Arc::from(vec![2u8, 0x1b, 0x03, 0x3b]);
        assert!(!table_is_sound(&bad, &eh_frame(), None, None));
    }
}
