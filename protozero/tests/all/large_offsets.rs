//! Offsets past 4 GiB: a message whose first field is a huge `bytes` payload
//! ending just beyond the 4 GiB mark must still have its later fields found
//! at their true offsets (no truncation to 32 bits anywhere on the path from
//! the typed table to the repeated-field iterators).
//!
//! The input lives in a sparse anonymous mapping: only the pages holding the
//! tags are written, the payload is untouched zero pages, so the test needs
//! a few KiB of memory and runs in milliseconds.
#![cfg(all(target_os = "linux", target_pointer_width = "64"))]

use protozero::{Decoder, FieldValue, RepeatedFields, TypedDecoder};

const GIB: usize = 1 << 30;
/// Mapping size: more than the message needs.
const MAP_LEN: usize = 5 * GIB;
/// Where the payload of field 1 ends and the later fields start.
const AFTER: usize = (4 * GIB) + 16;

/// A private, never-committed anonymous mapping, unmapped on drop.
struct Sparse {
    ptr: *mut u8,
    len: usize,
}

impl Sparse {
    fn new(len: usize) -> Sparse {
        // SAFETY: a fresh anonymous mapping at an address of the kernel's
        // choosing; it aliases no Rust object.
        let ptr = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        assert_ne!(ptr, libc::MAP_FAILED, "mmap of {len} bytes failed");
        Sparse {
            ptr: ptr.cast(),
            len,
        }
    }

    fn write(&mut self, offset: usize, bytes: &[u8]) {
        assert!(offset + bytes.len() <= self.len);
        // SAFETY: the range is inside the mapping (checked above), which is
        // writable and not borrowed elsewhere (`&mut self`).
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(offset), bytes.len()) }
    }

    fn bytes(&self, len: usize) -> &[u8] {
        assert!(len <= self.len);
        // SAFETY: the mapping is readable for `self.len` bytes (zero where
        // never written), lives as long as `self`, and is only written
        // through `&mut self`.
        unsafe { core::slice::from_raw_parts(self.ptr, len) }
    }
}

impl Drop for Sparse {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`; no borrow of it
        // outlives `self`.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// field 1 (bytes) whose payload runs from the header to `AFTER`, then
/// field 2 = 42, field 200 = 7, field 2 = 43, field 200 = 8; returns the
/// whole message.
fn huge_message(map: &mut Sparse) -> &[u8] {
    // The header is the tag plus a 5-byte length varint.
    let header_len = 6;
    let payload = (AFTER - header_len) as u64;
    let mut head = vec![0x0A];
    varint(payload, &mut head);
    assert_eq!(head.len(), header_len);
    map.write(0, &head);
    let tail = [0x10, 42, 0xC0, 0x0C, 7, 0x10, 43, 0xC0, 0x0C, 8];
    map.write(AFTER, &tail);
    map.bytes(AFTER + tail.len())
}

#[test]
fn fields_after_a_4_gib_payload_are_found_at_their_offsets() {
    let mut map = Sparse::new(MAP_LEN);
    let buf = huge_message(&mut map);

    let mut it = Decoder::new(buf);
    let first = it.next().expect("field 1").expect("well formed");
    assert!(matches!(first.value, FieldValue::Bytes(b) if b.len() == AFTER - 6));
    assert_eq!(it.offset(), AFTER);

    let d = TypedDecoder::<'_, 4>::new(buf);
    assert_eq!(d.error(), None);
    assert_eq!(d.get(2).and_then(|f| f.as_u64().ok()), Some(43));
    assert_eq!(d.get(200).and_then(|f| f.as_u64().ok()), Some(8));
    // Repeated lookups restart from the stored offset of the first
    // occurrence: truncated to 32 bits it would point into the payload.
    let twos: Vec<u64> = d.repeated(2).filter_map(|f| f.as_u64().ok()).collect();
    assert_eq!(twos, [42, 43]);
    let high: Vec<u64> = d.repeated(200).filter_map(|f| f.as_u64().ok()).collect();
    assert_eq!(high, [7, 8]);
    let with_groups = TypedDecoder::<'_, 4>::with_groups(buf);
    assert_eq!(with_groups.repeated(2).count(), 2);

    let from_offset: Vec<u32> = RepeatedFields::new(buf, AFTER, 200).map(|f| f.id).collect();
    assert_eq!(from_offset, [200, 200]);
}
