//! What names a trace in `metadata`, as upstream names it: `trace_uuid`
//! from the TraceUuid packet, else the config's `trace_uuid_msb/lsb`, else
//! a 64-bit FNV-1a hash of the trace's first 4 KiB; `trace_size_bytes`,
//! `trace_type` and the clock timestamps were converted to.

use crate::storage::Storage;

/// Bytes of the trace hashed into its uuid when it names none.
const HASHED_PREFIX: usize = 4096;
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The identity of a trace, gathered while it loads.
#[derive(Debug, Clone)]
pub struct TraceIdentity {
    hash: u64,
    hashed: usize,
    size: u64,
    from_packet: Option<(i64, i64)>,
    from_config: Option<(i64, i64)>,
}

impl Default for TraceIdentity {
    fn default() -> Self {
        TraceIdentity {
            hash: FNV_OFFSET,
            hashed: 0,
            size: 0,
            from_packet: None,
            from_config: None,
        }
    }
}

/// A uuid as upstream prints it: the 16 bytes (lsb then msb, little
/// endian) from last to first, grouped 8-4-4-4-12.
pub fn pretty_uuid(msb: i64, lsb: i64) -> String {
    let hex = format!("{:016x}{:016x}", msb as u64, lsb as u64);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

impl TraceIdentity {
    /// The next bytes of the trace file.
    pub fn on_bytes(&mut self, data: &[u8]) {
        self.size += data.len() as u64;
        let take = HASHED_PREFIX.saturating_sub(self.hashed).min(data.len());
        for &b in &data[..take] {
            self.hash ^= u64::from(b);
            self.hash = self.hash.wrapping_mul(FNV_PRIME);
        }
        self.hashed += take;
    }

    /// A TraceUuid packet (all zero means none).
    pub fn on_uuid_packet(&mut self, msb: i64, lsb: i64) {
        if (msb, lsb) != (0, 0) && self.from_packet.is_none() {
            self.from_packet = Some((msb, lsb));
        }
    }

    /// A trace config's uuid (all zero means none).
    pub fn on_config_uuid(&mut self, msb: i64, lsb: i64) {
        if (msb, lsb) != (0, 0) {
            self.from_config = Some((msb, lsb));
        }
    }

    /// Writes the identity into `metadata`.
    pub fn write(&self, storage: &mut Storage, trace_clock: u64) {
        let (msb, lsb) = self
            .from_packet
            .or(self.from_config)
            .unwrap_or((0, self.hash as i64));
        storage.set_metadata_str("trace_uuid", &pretty_uuid(msb, lsb));
        storage.set_metadata_int("trace_size_bytes", self.size as i64);
        storage.set_metadata_str("trace_type", "proto");
        // The builtin clock's id, whichever machine's it is.
        storage.set_metadata_int("trace_time_clock_id", (trace_clock & 0xFFFF_FFFF) as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_covers_the_first_4k_split_anywhere() {
        let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let mut whole = TraceIdentity::default();
        whole.on_bytes(&data);
        let mut parts = TraceIdentity::default();
        for c in data.chunks(333) {
            parts.on_bytes(c);
        }
        assert_eq!(whole.hash, parts.hash);
        assert_eq!(parts.size, 10_000);
        let mut prefix = TraceIdentity::default();
        prefix.on_bytes(&data[..4096]);
        assert_eq!(prefix.hash, whole.hash);
    }

    #[test]
    fn uuids_print_as_upstream_prints_them() {
        assert_eq!(
            pretty_uuid(0, 0x400c_8460_1ce2_950f),
            "00000000-0000-0000-400c-84601ce2950f"
        );
        assert_eq!(
            pretty_uuid(0x0123_4567_89ab_cdef, -1),
            "01234567-89ab-cdef-ffff-ffffffffffff"
        );
    }
}
