//! Reading one kernel field out of a record's payload and writing it as
//! a proto field: the integer, string, `dev_t` and kernel-address readers
//! the translation plans use (a child of `translate`, sharing its plan
//! types).

use protozero::Message;
use std::collections::HashMap;

use super::super::page::read_uint;
use super::super::pointer_hash::PointerHasher;
use super::{COMM_LEN, Kind, Step};

/// A signed integer as the varint upstream writes (sign-extended to 64
/// bits); 0 where out of the payload (callers checked the size).
pub(super) fn sint(payload: &[u8], offset: usize, size: usize) -> u64 {
    match read_uint(payload, offset, size) {
        Some(raw) if size < 8 => {
            let shift = 64 - 8 * size as u32;
            (((raw << shift) as i64) >> shift) as u64
        }
        Some(raw) => raw,
        None => 0,
    }
}

/// A 4-byte signed field as compact_sched stores it.
pub(super) fn int(payload: &[u8], offset: usize, size: usize) -> u64 {
    sint(payload, offset, size)
}

/// A fixed comm field: up to its NUL, at most 16 bytes.
pub(super) fn comm(payload: &[u8], offset: usize) -> &[u8] {
    let end = offset.saturating_add(COMM_LEN).min(payload.len());
    let bytes = payload.get(offset..end).unwrap_or(&[]);
    match bytes.iter().position(|&b| b == 0) {
        Some(n) => &bytes[..n],
        None => bytes,
    }
}

/// Writes one field as field `number` of `msg`; false if it did not decode.
pub(super) fn write_step(
    msg: &mut Message<'_>,
    s: &Step,
    payload: &[u8],
    number: u32,
    addrs: &mut HashMap<u64, u32>,
    pointers: &PointerHasher,
) -> bool {
    match s.kind {
        Kind::Signed => match read_uint(payload, s.offset, s.size) {
            Some(_) => msg.append_varint(number, sint(payload, s.offset, s.size)),
            None => return false,
        },
        Kind::Unsigned => match read_uint(payload, s.offset, s.size) {
            Some(v) => msg.append_varint(number, v),
            None => return false,
        },
        Kind::DevId => match read_uint(payload, s.offset, s.size) {
            Some(v) => msg.append_varint(number, dev_to_user(v)),
            None => return false,
        },
        Kind::SymAddr => match read_uint(payload, s.offset, s.size) {
            Some(addr) => {
                let next = u32::try_from(addrs.len() + 1).unwrap_or(u32::MAX);
                let idx = *addrs.entry(addr).or_insert(next);
                msg.append_varint(number, u64::from(idx));
            }
            None => return false,
        },
        // Never the pointer itself (issue 47): its keyed hash.
        Kind::DataPtr => match read_uint(payload, s.offset, s.size) {
            Some(ptr) => msg.append_varint(number, pointers.hash(ptr)),
            None => return false,
        },
        Kind::FixedStr => {
            let end = s.offset.saturating_add(s.size);
            let Some(bytes) = payload.get(s.offset..end) else {
                return false;
            };
            msg.append_bytes(number, until_nul(bytes));
        }
        Kind::CStr => {
            let Some(bytes) = payload.get(s.offset..) else {
                return false;
            };
            msg.append_bytes(number, until_nul(bytes));
        }
        Kind::DataLoc => {
            let Some(word) = read_uint(payload, s.offset, 4) else {
                return false;
            };
            let off = (word & 0xffff) as usize;
            let len = (word >> 16) as usize;
            if len == 0 {
                // Upstream writes nothing for an empty __data_loc.
                return true;
            }
            let Some(bytes) = payload.get(off..off + len) else {
                return false;
            };
            msg.append_bytes(number, until_nul(bytes));
        }
        Kind::StrPtr => msg.append_bytes(number, b""),
        Kind::Args(n) => {
            for i in 0..6 {
                match read_uint(payload, s.offset + i * n, n) {
                    Some(v) => msg.append_varint(number, v),
                    None => return false,
                }
            }
        }
    }
    true
}

/// The bytes before the first NUL.
pub(super) fn until_nul(bytes: &[u8]) -> &[u8] {
    match bytes.iter().position(|&b| b == 0) {
        Some(n) => &bytes[..n],
        None => bytes,
    }
}

/// The kernel's `dev_t` (major << 20 | minor) as userspace's `makedev`.
pub(super) fn dev_to_user(kernel: u64) -> u64 {
    let major = kernel >> 20;
    let minor = kernel & ((1 << 20) - 1);
    ((major & 0xffff_f000) << 32)
        | ((major & 0xfff) << 8)
        | ((minor & 0xffff_ff00) << 12)
        | (minor & 0xff)
}
