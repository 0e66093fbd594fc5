//! Sequence data loss broken down by cause: a packet's
//! `previous_packet_dropped` is a bitmask whose bits past the first say why
//! packets were lost, and the `stats` table counts each cause per buffer
//! for the sequences that `TraceStats.writer_stats` places in it.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{packet, rows, s, trace};

/// A sequence (id 2, in buffer 3) whose packets after the first each say
/// they follow a loss, with `reasons` as their bitmasks.
fn lossy_trace(reasons: &[u32]) -> Vec<u8> {
    let mut packets = vec![packet(|p| {
        p.set_trusted_packet_sequence_id(2);
    })];
    for &r in reasons {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(2);
            p.set_previous_packet_dropped(r);
        }));
    }
    packets.push(packet(|p| {
        p.set_trusted_uid(0);
        p.set_trusted_packet_sequence_id(1);
        let mut ts = p.begin_trace_stats();
        let mut w = ts.add_writer_stats();
        w.set_sequence_id(2);
        w.set_buffer(3);
    }));
    trace(&packets)
}

#[test]
fn each_cause_bit_is_counted_per_buffer() {
    // Present+read gap, present+overwrite+writer abort, present alone,
    // present+read gap again, present+smb full.
    let tp = TraceProcessor::from_bytes(&lossy_trace(&[3, 193, 1, 3, 257])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT name, idx, value FROM stats \
             WHERE name GLOB 'traced_buf_data_loss_*' AND value > 0 ORDER BY name"
        ),
        vec![
            vec![
                s("traced_buf_data_loss_overwrite"),
                Value::Int(3),
                Value::Int(1)
            ],
            vec![
                s("traced_buf_data_loss_read_gap"),
                Value::Int(3),
                Value::Int(2)
            ],
            vec![
                s("traced_buf_data_loss_smb_full"),
                Value::Int(3),
                Value::Int(1)
            ],
            vec![
                s("traced_buf_data_loss_writer_abort"),
                Value::Int(3),
                Value::Int(1)
            ],
        ]
    );
    // Every loss counts once as a lost packet, whatever its causes.
    assert_eq!(
        rows(
            &tp,
            "SELECT idx, value FROM stats WHERE name = 'traced_buf_sequence_packet_loss'"
        ),
        vec![vec![Value::Int(3), Value::Int(5)]]
    );
}

#[test]
fn a_loss_without_a_cause_counts_no_cause() {
    let tp = TraceProcessor::from_bytes(&lossy_trace(&[1, 1])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*) FROM stats WHERE name GLOB 'traced_buf_data_loss_*' AND value > 0"
        ),
        vec![vec![Value::Int(0)]]
    );
}
