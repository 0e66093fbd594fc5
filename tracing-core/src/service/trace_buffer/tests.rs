//! Scenario tests of the trace buffer: ordering, reassembly, patches,
//! scrapes, losses, both fill policies.

use super::*;
use protozero::varint::redundant_varint4;

const SEQ: SequenceKey = SequenceKey {
    producer: 1,
    writer: 1,
};
const FIRST: ChunkFlags = ChunkFlags::FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK;
const LAST: ChunkFlags = ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK;
const PATCH: ChunkFlags = ChunkFlags::CHUNK_NEEDS_PATCHING;

/// A payload made of the given fragments (4-byte size headers), padded to
/// `len` bytes when `len` is larger.
fn payload(frags: &[&[u8]], len: usize) -> Vec<u8> {
    let mut p = Vec::new();
    for f in frags {
        p.extend_from_slice(&redundant_varint4(f.len() as u32));
        p.extend_from_slice(f);
    }
    if p.len() < len {
        p.resize(len, 0);
    }
    p
}

fn meta(seq: SequenceKey, chunk_id: u32, frags: usize, flags: &[ChunkFlags]) -> ChunkMeta {
    let bits = flags.iter().fold(0, |b, f| b | f.bits());
    ChunkMeta {
        sequence: seq,
        chunk_id,
        num_fragments: frags as u16,
        flags: ChunkFlags::from_bits(bits),
        complete: true,
    }
}

fn put(b: &mut TraceBuffer, seq: SequenceKey, id: u32, frags: &[&[u8]], flags: &[ChunkFlags]) {
    let m = meta(seq, id, frags.len(), flags);
    assert_ne!(b.copy_chunk(&m, &payload(frags, 64)), CopyOutcome::Refused);
}

/// Every packet readable now: (sequence, loss bits, bytes).
fn read_all(b: &mut TraceBuffer) -> Vec<(SequenceKey, u32, Vec<u8>)> {
    b.begin_read();
    let mut got = Vec::new();
    let mut out = Vec::new();
    while let Some(info) = b.read_next_packet(&mut out) {
        got.push((info.sequence, info.loss.0, std::mem::take(&mut out)));
    }
    got
}

fn bytes(got: &[(SequenceKey, u32, Vec<u8>)]) -> Vec<Vec<u8>> {
    got.iter().map(|g| g.2.clone()).collect()
}

fn ring(size: usize) -> TraceBuffer {
    TraceBuffer::new(size, FillPolicy::RingBuffer).unwrap()
}

#[test]
fn whole_fragments_come_out_in_order() {
    let mut b = ring(4096);
    put(&mut b, SEQ, 0, &[b"a", b"bb", b"", b"ccc"], &[]);
    let got = read_all(&mut b);
    assert_eq!(
        bytes(&got),
        [b"a".to_vec(), b"bb".to_vec(), b"ccc".to_vec()]
    );
    assert_eq!(got[0].1, DataLoss::PRESENT, "a sequence's start is flagged");
    assert!(got[1..].iter().all(|g| g.1 == 0));
    assert_eq!(b.stats().chunks_read, 1);
    assert!(read_all(&mut b).is_empty(), "reads are destructive");
}

#[test]
fn packets_spanning_chunks_are_reassembled_and_wait_for_their_tail() {
    let mut b = ring(4096);
    put(&mut b, SEQ, 0, &[b"x", b"he"], &[LAST]);
    put(&mut b, SEQ, 1, &[b"ll"], &[FIRST, LAST]);
    assert_eq!(
        bytes(&read_all(&mut b)),
        [b"x".to_vec()],
        "tail not here yet"
    );
    put(&mut b, SEQ, 2, &[b"o", b"y"], &[FIRST]);
    let got = read_all(&mut b);
    assert_eq!(bytes(&got), [b"hello".to_vec(), b"y".to_vec()]);
    assert!(got.iter().all(|g| g.1 == 0));
    assert_eq!(b.stats().chunks_read, 3);
}

#[test]
fn a_missing_chunk_is_a_loss_once_a_later_one_is_there() {
    let mut b = ring(4096);
    put(&mut b, SEQ, 0, &[b"a"], &[]);
    put(&mut b, SEQ, 2, &[b"c"], &[]);
    let got = read_all(&mut b);
    assert_eq!(bytes(&got), [b"a".to_vec(), b"c".to_vec()]);
    assert_eq!(got[1].1, DataLoss::PRESENT | DataLoss::READ_GAP);
    // A late copy of the missing chunk is refused, not read out of order.
    assert_eq!(
        b.copy_chunk(&meta(SEQ, 1, 1, &[]), &payload(&[b"b"], 64)),
        CopyOutcome::Refused
    );
}

#[test]
fn a_packet_whose_next_chunk_is_missing_is_lost() {
    let mut b = ring(4096);
    put(&mut b, SEQ, 0, &[b"a", b"he"], &[LAST]);
    put(&mut b, SEQ, 2, &[b"z"], &[]);
    let got = read_all(&mut b);
    assert_eq!(bytes(&got), [b"a".to_vec(), b"z".to_vec()]);
    assert_eq!(
        got[1].1,
        DataLoss::PRESENT | DataLoss::REASSEMBLY_GAP | DataLoss::READ_GAP
    );
}

#[test]
fn orphan_continuations_and_broken_chains_are_losses() {
    let mut b = ring(4096);
    put(&mut b, SEQ, 0, &[b"tail", b"ok"], &[FIRST]);
    let got = read_all(&mut b);
    assert_eq!(bytes(&got), [b"ok".to_vec()]);
    assert_eq!(got[0].1, DataLoss::PRESENT | DataLoss::ORPHAN_CONTINUATION);

    let mut b = ring(4096);
    put(&mut b, SEQ, 0, &[b"he"], &[LAST]);
    put(&mut b, SEQ, 1, &[b"new"], &[]);
    let got = read_all(&mut b);
    assert_eq!(bytes(&got), [b"new".to_vec()]);
    assert_eq!(
        got[0].1,
        DataLoss::PRESENT | DataLoss::REASSEMBLY_BROKEN_CHAIN
    );
}

#[test]
fn chunk_ids_wrap_around() {
    let mut b = ring(4096);
    put(&mut b, SEQ, u32::MAX, &[b"a", b"he"], &[LAST]);
    put(&mut b, SEQ, 0, &[b"llo", b"b"], &[FIRST]);
    let got = read_all(&mut b);
    assert_eq!(
        bytes(&got),
        [b"a".to_vec(), b"hello".to_vec(), b"b".to_vec()]
    );
    // Only the start is flagged: the writer's earlier chunks are unknown.
    assert_eq!(got[0].1, DataLoss::PRESENT);
    assert!(got[1..].iter().all(|g| g.1 == 0));
}

#[test]
fn every_sequence_start_is_flagged_once() {
    // As Perfetto's buffer does, whatever the first chunk id.
    for first in [0, 7] {
        let mut b = ring(4096);
        put(&mut b, SEQ, first, &[b"a"], &[]);
        assert_eq!(read_all(&mut b)[0].1, DataLoss::PRESENT);
        put(&mut b, SEQ, first + 1, &[b"b"], &[]);
        assert_eq!(
            read_all(&mut b)[0].1,
            0,
            "later reads continue the sequence"
        );
    }
}

#[test]
fn out_of_order_commits_are_put_in_order() {
    let mut b = ring(4096);
    put(&mut b, SEQ, 1, &[b"b"], &[]);
    put(&mut b, SEQ, 0, &[b"a"], &[]);
    let got = read_all(&mut b);
    assert_eq!(bytes(&got), [b"a".to_vec(), b"b".to_vec()]);
    assert_eq!(got[1].1, 0, "no spurious loss");
    assert_eq!(b.stats().chunks_committed_out_of_order, 1);
}

#[test]
fn patches_hold_the_sequence_until_the_last_one() {
    let mut b = ring(4096);
    let other = SequenceKey {
        producer: 2,
        writer: 1,
    };
    put(&mut b, SEQ, 0, &[b"XXXXXXXX"], &[PATCH]);
    put(&mut b, other, 0, &[b"free"], &[]);
    assert_eq!(bytes(&read_all(&mut b)), [b"free".to_vec()]);
    // Another producer cannot patch it, nor can an offset past the payload.
    let wrong = SequenceKey {
        producer: 2,
        writer: 1,
    };
    assert!(!b.try_patch(wrong, 0, &[(4, *b"evil")], false));
    assert!(!b.try_patch(SEQ, 0, &[(62, *b"long")], false));
    assert!(b.try_patch(SEQ, 0, &[(4, *b"abcd")], true));
    assert!(read_all(&mut b).is_empty(), "more patches announced");
    assert!(b.try_patch(SEQ, 0, &[(8, *b"efgh")], false));
    assert_eq!(bytes(&read_all(&mut b)), [b"abcdefgh".to_vec()]);
    assert_eq!(b.stats().patches_succeeded, 2);
    assert_eq!(b.stats().patches_failed, 2);
}

#[test]
fn a_chunk_scraped_complete_then_committed_is_kept_once_and_no_violation() {
    // A busy producer completes a chunk; its commit is on the way when a
    // flush scrapes the SMB and copies the chunk as complete. The commit
    // then brings the same chunk again.
    let mut b = ring(4096);
    let p = payload(&[b"one", b"two"], 64);
    assert_eq!(b.copy_chunk(&meta(SEQ, 0, 2, &[]), &p), CopyOutcome::Stored);
    assert_eq!(
        b.copy_chunk(&meta(SEQ, 0, 2, &[]), &p),
        CopyOutcome::Unchanged
    );
    assert_eq!(b.stats().abi_violations, 0);
    assert_eq!(b.stats().chunks_discarded, 0);
    assert_eq!(bytes(&read_all(&mut b)), [b"one".to_vec(), b"two".to_vec()]);
    // Also after it was read.
    let mut b = ring(4096);
    assert_eq!(b.copy_chunk(&meta(SEQ, 0, 2, &[]), &p), CopyOutcome::Stored);
    put(&mut b, SEQ, 1, &[b"three"], &[]);
    assert_eq!(read_all(&mut b).len(), 3);
    assert_ne!(b.copy_chunk(&meta(SEQ, 0, 2, &[]), &p), CopyOutcome::Stored);
    assert_eq!(b.stats().abi_violations, 0);
    assert!(read_all(&mut b).is_empty(), "nothing read twice");
    // A complete copy that changes is a violation.
    let mut b = ring(4096);
    b.copy_chunk(&meta(SEQ, 0, 2, &[]), &p);
    let more = payload(&[b"one", b"two", b"3"], 64);
    assert_eq!(
        b.copy_chunk(&meta(SEQ, 0, 3, &[]), &more),
        CopyOutcome::Refused
    );
    assert_eq!(b.stats().abi_violations, 1);
}

#[test]
fn a_scraped_chunk_is_read_up_to_its_last_fragment_then_completed() {
    let mut b = ring(4096);
    let mut m = meta(SEQ, 0, 2, &[]);
    m.complete = false;
    let p = payload(&[b"a", b"partial"], 64);
    assert_eq!(b.copy_chunk(&m, &p), CopyOutcome::Stored);
    assert_eq!(bytes(&read_all(&mut b)), [b"a".to_vec()]);
    let full = payload(&[b"a", b"partial", b"z"], 64);
    assert_eq!(
        b.copy_chunk(&meta(SEQ, 0, 3, &[]), &full),
        CopyOutcome::Rewritten
    );
    assert_eq!(
        bytes(&read_all(&mut b)),
        [b"partial".to_vec(), b"z".to_vec()]
    );
    // A copy that shrank is refused.
    let mut b2 = ring(4096);
    b2.copy_chunk(&m, &p);
    assert_eq!(
        b2.copy_chunk(&meta(SEQ, 0, 2, &[]), &payload(&[b"a"], 32)),
        CopyOutcome::Refused
    );
    assert_eq!(b2.stats().abi_violations, 1);
}

#[test]
fn corrupt_and_abandoned_fragments_are_reported() {
    let mut b = ring(4096);
    let mut p = payload(&[b"ok"], 0);
    p.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x01]);
    b.copy_chunk(&meta(SEQ, 0, 3, &[]), &p);
    put(&mut b, SEQ, 1, &[b"next"], &[]);
    let got = read_all(&mut b);
    assert_eq!(bytes(&got), [b"ok".to_vec(), b"next".to_vec()]);
    assert_eq!(got[1].1, DataLoss::PRESENT | DataLoss::CHUNK_CORRUPTED);
    assert_eq!(b.stats().abi_violations, 1);

    let mut b = ring(4096);
    let mut p = redundant_varint4(crate::abi::PACKET_SIZE_DROP_PACKET).to_vec();
    p.resize(32, 0);
    b.copy_chunk(&meta(SEQ, 0, 1, &[]), &p);
    put(&mut b, SEQ, 1, &[b"after"], &[]);
    let got = read_all(&mut b);
    assert_eq!(got[0].1, DataLoss::PRESENT | DataLoss::WRITER_ABORT);
    assert_eq!(b.stats().trace_writer_packet_loss, 1);
}

#[test]
fn the_ring_overwrites_the_oldest_and_says_so() {
    let mut b = ring(256);
    for id in 0..10u32 {
        put(&mut b, SEQ, id, &[&[id as u8; 20]], &[]);
    }
    let got = read_all(&mut b);
    // 64-byte chunks in a 256-byte ring: the last four survive.
    assert_eq!(got.len(), 4);
    assert_eq!(got[0].2, vec![6u8; 20]);
    assert_eq!(got[0].1, DataLoss::PRESENT | DataLoss::OVERWRITE);
    assert!(got[1..].iter().all(|g| g.1 == 0));
    assert_eq!(b.stats().chunks_overwritten, 6);
    assert!(b.stats().write_wrap_count >= 2);
    // Chunks already read are overwritten silently.
    for id in 10..14u32 {
        put(&mut b, SEQ, id, &[&[id as u8; 20]], &[]);
    }
    let got = read_all(&mut b);
    assert_eq!(got.len(), 4);
    assert!(got.iter().all(|g| g.1 == 0));
    assert_eq!(b.stats().chunks_overwritten, 6);
}

#[test]
fn discard_refuses_only_what_would_overwrite_unread_data() {
    let mut b = TraceBuffer::new(256, FillPolicy::Discard).unwrap();
    for id in 0..4u32 {
        put(&mut b, SEQ, id, &[&[id as u8; 20]], &[]);
    }
    let fifth = meta(SEQ, 4, 1, &[]);
    assert_eq!(
        b.copy_chunk(&fifth, &payload(&[&[4; 20]], 64)),
        CopyOutcome::Refused
    );
    assert_eq!(b.stats().chunks_discarded, 1);
    assert_eq!(read_all(&mut b).len(), 4);
    // Drained: recording goes on, and the refused chunk shows as a gap.
    put(&mut b, SEQ, 5, &[&[5; 20]], &[]);
    let got = read_all(&mut b);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, DataLoss::PRESENT | DataLoss::READ_GAP);
    assert_eq!(b.stats().chunks_overwritten, 0);
}

#[test]
fn sequences_are_independent() {
    let mut b = ring(4096);
    let a = SEQ;
    let c = SequenceKey {
        producer: 1,
        writer: 2,
    };
    put(&mut b, a, 0, &[b"a0", b"he"], &[LAST]);
    put(&mut b, c, 0, &[b"c0"], &[]);
    let got = read_all(&mut b);
    let start = DataLoss::PRESENT;
    assert_eq!(
        got,
        vec![(a, start, b"a0".to_vec()), (c, start, b"c0".to_vec())]
    );
    put(&mut b, a, 1, &[b"y"], &[FIRST]);
    assert_eq!(read_all(&mut b), vec![(a, 0, b"hey".to_vec())]);
}
