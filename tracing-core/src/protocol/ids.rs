//! The id ranges a producer and the service agree on. A writer id names one
//! TraceWriter of a producer (it becomes the packet sequence id together
//! with the producer id); a buffer id (`target_buffer`) names the service's
//! trace buffer a chunk goes to; a chunk id counts a writer's chunks. On the
//! wire all three are `uint32`; the ranges below are what either side accepts.

/// Largest valid writer id (2^15 − 1); valid writer ids are
/// `1..=MAX_WRITER_ID`, 0 is never a writer. The producer allocates within
/// this range and the service drops commits and patches outside it.
pub const MAX_WRITER_ID: u16 = 32767;

/// Whether `id`, as read from the wire, is a valid writer id.
pub fn is_valid_writer_id(id: u32) -> bool {
    (1..=u32::from(MAX_WRITER_ID)).contains(&id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_ids_run_from_one_to_the_maximum() {
        assert!(!is_valid_writer_id(0));
        assert!(is_valid_writer_id(1));
        assert!(is_valid_writer_id(32767));
        assert!(!is_valid_writer_id(32768));
        assert!(!is_valid_writer_id(u32::MAX));
    }
}
