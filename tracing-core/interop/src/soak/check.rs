//! Checks the packets a soak reads as they arrive, keeping only a few words
//! per sequence (a soak reads gigabytes): every packet decodes, every
//! TestEvent payload is byte for byte what [`payload`] says
//! its writer wrote, each writer's packets come on one trusted sequence in
//! strictly increasing order, and every gap in a sequence falls just before
//! a packet flagged `previous_packet_dropped` (no silent loss). At the end,
//! [`Checker::finish`] compares each writer's last packet with what its
//! producer says it wrote (nothing lost at the tail, where no later packet
//! could carry a flag).

use std::collections::HashMap;

use protozero::Decoder;

use super::payload::{self, test_event};

/// TracePacket field numbers read here.
const SEQUENCE_ID: u32 = 10;
const PREVIOUS_PACKET_DROPPED: u32 = 42;
const FOR_TESTING: u32 = 900;

/// Problems kept word for word (the rest are only counted).
const MAX_PROBLEMS: usize = 20;

/// What the reads held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckCounts {
    /// Packets read (all kinds).
    pub packets: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Soak packets (with a TestEvent) among them.
    pub test_packets: u64,
    /// Other packets (the service's own: clock snapshots, stats, config...).
    pub other_packets: u64,
    /// Soak packets lost, counted from the gaps in their sequences (each
    /// gap flagged by the packet after it).
    pub lost: u64,
    /// Gaps (flagged) in the sequences.
    pub gaps: u64,
    /// Packets flagged `previous_packet_dropped` that follow no gap (each
    /// sequence's first packet is, by both services).
    pub flagged_without_gap: u64,
    /// Sequences (writers) seen.
    pub sequences: u64,
}

#[derive(Debug, Clone, Copy)]
struct Sequence {
    tag: u64,
    last: u32,
    last_is_final: bool,
}

/// The streaming checker.
#[derive(Debug, Default)]
pub struct Checker {
    sequences: HashMap<u64, Sequence>,
    writer_sequence: HashMap<u64, u64>,
    scratch: String,
    counts: CheckCounts,
    problems: Vec<String>,
    problem_count: u64,
}

impl Checker {
    /// A checker that has seen nothing.
    pub fn new() -> Checker {
        Checker::default()
    }

    /// What it has counted so far.
    pub fn counts(&self) -> CheckCounts {
        self.counts
    }

    /// The problems found (the first `MAX_PROBLEMS` word for word) and
    /// how many there were in all.
    pub fn problems(&self) -> (&[String], u64) {
        (&self.problems, self.problem_count)
    }

    fn problem(&mut self, text: String) {
        self.problem_count += 1;
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(text);
        }
    }

    /// Checks one packet, as `ReadBuffers` returned it.
    pub fn packet(&mut self, packet: &[u8]) {
        self.counts.packets += 1;
        self.counts.bytes += packet.len() as u64;
        let mut seq_id = None;
        let mut dropped = false;
        let mut test = None;
        for f in Decoder::new(packet) {
            let Ok(f) = f else {
                self.problem(format!("packet {} does not decode", self.counts.packets));
                return;
            };
            match f.id {
                SEQUENCE_ID => seq_id = f.as_varint().ok(),
                PREVIOUS_PACKET_DROPPED => dropped = f.as_varint().is_ok_and(|v| v != 0),
                FOR_TESTING => test = f.as_bytes().ok(),
                _ => {}
            }
        }
        let Some(test) = test else {
            self.counts.other_packets += 1;
            return;
        };
        self.counts.test_packets += 1;
        let Some(seq_id) = seq_id else {
            self.problem("a soak packet without trusted_packet_sequence_id".into());
            return;
        };
        self.test_packet(seq_id, dropped, test);
    }

    fn test_packet(&mut self, seq_id: u64, dropped: bool, test: &[u8]) {
        let (mut text, mut seq, mut tag, mut is_last) = (None, None, None, false);
        for f in Decoder::new(test) {
            let Ok(f) = f else {
                self.problem(format!("a TestEvent on sequence {seq_id} does not decode"));
                return;
            };
            match f.id {
                test_event::STR => text = f.as_bytes().ok(),
                test_event::SEQ_VALUE => seq = f.as_varint().ok().map(|v| v as u32),
                test_event::COUNTER => tag = f.as_varint().ok(),
                test_event::IS_LAST => is_last = f.as_varint().is_ok_and(|v| v != 0),
                _ => {}
            }
        }
        let (Some(text), Some(seq), Some(tag)) = (text, seq, tag) else {
            self.problem(format!("a TestEvent on sequence {seq_id} lacks a field"));
            return;
        };
        let mut scratch = std::mem::take(&mut self.scratch);
        let intact = payload::is_intact(text, tag, seq, &mut scratch);
        self.scratch = scratch;
        if !intact {
            self.problem(format!(
                "payload of packet {seq} of writer {tag:#x} differs ({} bytes)",
                text.len()
            ));
        }
        let expected = match self.sequences.get(&seq_id) {
            Some(s) if s.tag != tag => {
                self.problem(format!(
                    "sequence {seq_id} holds writers {:#x} and {tag:#x}",
                    s.tag
                ));
                return;
            }
            Some(s) => u64::from(s.last) + 1,
            None => {
                if let Some(other) = self.writer_sequence.insert(tag, seq_id) {
                    self.problem(format!("writer {tag:#x} on sequences {other} and {seq_id}"));
                }
                self.counts.sequences += 1;
                0
            }
        };
        let seq64 = u64::from(seq);
        if seq64 < expected {
            self.problem(format!(
                "sequence {seq_id}: packet {seq} after packet {}",
                expected - 1
            ));
            return;
        }
        let gap = seq64 - expected;
        if gap > 0 {
            self.counts.gaps += 1;
            self.counts.lost += gap;
            if !dropped {
                self.problem(format!(
                    "sequence {seq_id}: packets {expected}..{seq} lost without a flag"
                ));
            }
        } else if dropped {
            self.counts.flagged_without_gap += 1;
        }
        self.sequences.insert(
            seq_id,
            Sequence {
                tag,
                last: seq,
                last_is_final: is_last,
            },
        );
    }

    /// Compares the sequences with what the producers say they wrote
    /// (`written`: packets per writer tag) and returns the final counts.
    pub fn finish(&mut self, written: &HashMap<u64, u64>) -> CheckCounts {
        for (&tag, &n) in written {
            let last = self
                .writer_sequence
                .get(&tag)
                .and_then(|id| self.sequences.get(id))
                .copied();
            match last {
                None if n > 0 => self.problem(format!("writer {tag:#x}: none of {n} packets read")),
                None => {}
                Some(s) if u64::from(s.last) + 1 != n || !s.last_is_final => {
                    self.problem(format!(
                        "writer {tag:#x}: wrote {n} packets, the last read is {} (final: {})",
                        s.last, s.last_is_final
                    ));
                }
                Some(_) => {}
            }
        }
        let strays: Vec<u64> = self
            .writer_sequence
            .keys()
            .filter(|tag| !written.contains_key(tag))
            .copied()
            .collect();
        for tag in strays {
            self.problem(format!(
                "packets of writer {tag:#x}, which no producer reported"
            ));
        }
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use protozero::HeapWriter;

    use super::*;

    fn packet(seq_id: u64, tag: u64, seq: u32, dropped: bool, last: bool) -> Vec<u8> {
        let mut text = String::new();
        payload::fill(&mut text, tag, seq);
        let mut te = HeapWriter::new();
        {
            let mut m = te.root();
            m.append_string(test_event::STR, &text);
            m.append_uint32(test_event::SEQ_VALUE, seq);
            m.append_uint64(test_event::COUNTER, tag);
            if last {
                m.append_bool(test_event::IS_LAST, true);
            }
        }
        let te = te.finish().expect("a TestEvent");
        let mut w = HeapWriter::new();
        {
            let mut m = w.root();
            m.append_bytes(FOR_TESTING, &te);
            m.append_uint64(SEQUENCE_ID, seq_id);
            if dropped {
                m.append_bool(PREVIOUS_PACKET_DROPPED, true);
            }
        }
        w.finish().expect("a packet")
    }

    #[test]
    fn flagged_gaps_count_as_losses() {
        let tag = payload::writer_tag(1, 2);
        let mut c = Checker::new();
        c.packet(&packet(5, tag, 0, true, false));
        c.packet(&packet(5, tag, 1, false, false));
        c.packet(&packet(5, tag, 4, true, false));
        c.packet(&packet(5, tag, 5, false, true));
        let counts = c.finish(&HashMap::from([(tag, 6)]));
        assert_eq!(c.problems().1, 0, "{:?}", c.problems().0);
        assert_eq!((counts.test_packets, counts.lost, counts.gaps), (4, 2, 1));
        assert_eq!(counts.flagged_without_gap, 1);
    }

    #[test]
    fn silent_loss_damage_disorder_and_tail_loss_are_problems() {
        let tag = payload::writer_tag(0, 0);
        let mut c = Checker::new();
        c.packet(&packet(2, tag, 0, true, false));
        c.packet(&packet(2, tag, 2, false, false));
        assert_eq!(c.problems().1, 1, "a gap without a flag");
        c.packet(&packet(2, tag, 1, false, false));
        assert_eq!(c.problems().1, 2, "out of order");
        let mut damaged = packet(2, tag, 3, false, false);
        let n = damaged.len();
        damaged[n / 2] ^= 1;
        c.packet(&damaged);
        assert_eq!(c.problems().1, 3, "a damaged payload");
        c.finish(&HashMap::from([(tag, 10)]));
        assert_eq!(c.problems().1, 4, "the tail lost: {:?}", c.problems().0);
    }
}
