//! A length slot that will never get its real value still reaches the
//! delegate as a filled patch: a child leaked with `mem::forget` and a
//! message that grew past the protobuf limit. A delegate that releases patches
//! in order (the TraceWriter's patch list) is otherwise held back forever.

use protozero::{Delegate, OpenSlots, OwnedSlice, PatchId, Slice, WriteError, Writer};

/// Redirects every open slot to a fresh patch on each slice switch and
/// records the patches filled; writes go to one reused scratch slice.
#[derive(Default)]
struct PatchRecorder {
    scratch: Option<OwnedSlice>,
    next_id: u32,
    issued: Vec<u32>,
    filled: Vec<(u32, [u8; 4])>,
}

// SAFETY: the scratch slice is handed out again only on the next call, after
// every open slot was redirected to a patch, so no slot points into it.
unsafe impl Delegate for PatchRecorder {
    fn next_slice(
        &mut self,
        _used_end: *mut u8,
        open: &mut OpenSlots,
        min_len: usize,
    ) -> Result<Slice, WriteError> {
        for slot in open.iter_mut() {
            if slot.memory_ptr().is_some() {
                self.next_id += 1;
                self.issued.push(self.next_id);
                slot.redirect_to_patch(PatchId(self.next_id));
            }
        }
        let len = min_len.max(64);
        if self.scratch.as_ref().is_none_or(|s| s.len() < len) {
            self.scratch = Some(OwnedSlice::new(len, 0));
        }
        Ok(self
            .scratch
            .as_ref()
            .map_or_else(Slice::empty, OwnedSlice::slice))
    }

    fn fill_patch(&mut self, id: PatchId, bytes: [u8; 4]) {
        self.filled.push((id.0, bytes));
    }
}

#[test]
fn leaked_grandchild_patch_is_filled_when_its_parent_closes() {
    let mut w = Writer::with_delegate(PatchRecorder::default());
    {
        let mut root = w.root();
        let mut child = root.begin_nested(1);
        let mut grandchild = child.begin_nested(2);
        grandchild.append_bytes(3, &[5u8; 300]);
        std::mem::forget(grandchild);
        child.append_uint32(4, 1);
    }
    let d = w.delegate();
    let mut filled: Vec<u32> = d.filled.iter().map(|f| f.0).collect();
    filled.sort_unstable();
    assert_eq!(filled, d.issued, "every patch handed out was filled");
    assert!(d.issued.len() >= 2);
}

#[test]
fn leaked_slots_are_discarded_through_the_delegate() {
    // A root message cannot see its leaked child close, but whoever owns the
    // stream can discard the open slots, which fills their patches.
    let mut stream = protozero::StreamWriter::new();
    let mut d = PatchRecorder::default();
    {
        // SAFETY: `stream` is fresh and only ever gets slices from `d`.
        let mut root = unsafe { protozero::Message::new_root(&mut stream, &mut d) };
        let mut child = root.begin_nested(1);
        child.append_bytes(2, &[1u8; 200]);
        std::mem::forget(child);
    }
    assert_eq!(stream.open_slot_count(), 1);
    assert_eq!(stream.discard_open_slots(&mut d), 1);
    assert_eq!(stream.open_slot_count(), 0);
    assert_eq!(d.filled, [(1, [0x80, 0x80, 0x80, 0x00])]);
}

#[test]
#[cfg_attr(miri, ignore = "writes 256 MiB")]
fn too_long_message_still_fills_its_patch() {
    let big = vec![0u8; 1 << 27];
    let mut w = Writer::with_delegate(PatchRecorder::default());
    {
        let mut root = w.root();
        let mut child = root.begin_nested(1);
        child.append_bytes(2, &big);
        child.append_bytes(2, &big);
    }
    assert!(matches!(w.error(), Some(WriteError::MessageTooLong { .. })));
    let d = w.delegate();
    assert_eq!(d.issued, [1]);
    assert_eq!(d.filled.len(), 1, "the too-long message's patch is filled");
}
