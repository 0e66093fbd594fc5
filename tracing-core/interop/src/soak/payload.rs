//! What a soak producer writes, as a pure function of who writes it, so the
//! checker can tell an intact packet from a damaged one without keeping a
//! copy: packet `seq` of thread `thread` of producer `producer` is a
//! TracePacket with a timestamp and a `for_testing` TestEvent holding
//! `str` = [`fill`] of [`payload_len`] bytes, `seq_value` = `seq`,
//! `counter` = [`writer_tag`], and `is_last` on the thread's final packet.
//!
//! Sizes are mostly 40–200 bytes, one packet in 50 is 1–8 KB, so packets
//! regularly span chunks (fragments and size patches through CommitData).

/// TestEvent field numbers.
pub mod test_event {
    /// `str`.
    pub const STR: u32 = 1;
    /// `seq_value`.
    pub const SEQ_VALUE: u32 = 2;
    /// `counter`.
    pub const COUNTER: u32 = 3;
    /// `is_last`.
    pub const IS_LAST: u32 = 4;
}

/// A 64-bit mix (splitmix64's finalizer).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The tag that names a writer in its packets (TestEvent `counter`):
/// producer in the high 32 bits, thread in the low.
pub fn writer_tag(producer: u32, thread: u32) -> u64 {
    (u64::from(producer) << 32) | u64::from(thread)
}

/// The seed of one packet's payload.
fn seed(tag: u64, seq: u32) -> u64 {
    mix(tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(seq))
}

/// The payload length of packet `seq` of writer `tag`.
pub fn payload_len(tag: u64, seq: u32) -> usize {
    let s = seed(tag, seq);
    if s % 50 == 7 {
        1_000 + (s >> 8) as usize % 7_000
    } else {
        40 + (s >> 8) as usize % 161
    }
}

/// Fills `out` with the payload of packet `seq` of writer `tag` (ASCII, so
/// it is a valid `string` field).
pub fn fill(out: &mut String, tag: u64, seq: u32) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let len = payload_len(tag, seq);
    out.clear();
    out.reserve(len);
    let mut x = seed(tag, seq) | 1;
    for _ in 0..len {
        // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        out.push(ALPHABET[(v >> 58) as usize] as char);
    }
}

/// Whether `got` is the payload of packet `seq` of writer `tag`
/// (`scratch` is reused between calls).
pub fn is_intact(got: &[u8], tag: u64, seq: u32, scratch: &mut String) -> bool {
    fill(scratch, tag, seq);
    got == scratch.as_bytes()
}

/// The timestamp of packet `seq` (any increasing value will do).
pub fn timestamp(seq: u32) -> u64 {
    1_000_000 + u64::from(seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_mostly_small_and_sometimes_large() {
        let tag = writer_tag(3, 1);
        let lens: Vec<usize> = (0..10_000).map(|s| payload_len(tag, s)).collect();
        let large = lens.iter().filter(|&&l| l >= 1_000).count();
        assert!((100..400).contains(&large), "{large} large packets");
        assert!(lens.iter().all(|&l| (40..8_000).contains(&l)));
    }

    #[test]
    fn payloads_differ_between_writers_and_packets() {
        let mut a = String::new();
        let mut b = String::new();
        fill(&mut a, writer_tag(1, 0), 5);
        fill(&mut b, writer_tag(1, 1), 5);
        assert_ne!(a, b);
        assert!(is_intact(a.as_bytes(), writer_tag(1, 0), 5, &mut b));
        assert!(!is_intact(a.as_bytes(), writer_tag(1, 0), 6, &mut b));
    }
}
