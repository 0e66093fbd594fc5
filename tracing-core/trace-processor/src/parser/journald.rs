//! systemd journal entries (`TracePacket.journald_event`, written by the
//! `linux.systemd_journald` data source) as upstream imports them: an entry
//! becomes a row of `__intrinsic_logs` with log source `systemd_journald`
//! (on the writing thread when the entry names a pid, its tid defaulting to
//! the pid; priority 0 when absent, a missing tag or message NULL) with its
//! uid, comm, systemd unit, hostname and transport as args; the packet a
//! flush writes with the data source's counters (`num_total`, `num_failed`) sets the
//! `systemd_journal_num_*` stats instead and adds no row.

use super::Parser;
use super::fields::Fields;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tables::logs::LogRow;

/// `TracePacket.journald_event`.
const JOURNALD_EVENT: u32 = 132;

/// The payload this module imports: one journal entry or one flush's counters.
pub const IMPORTERS: &[(u32, Importer)] = &[(JOURNALD_EVENT, import)];

/// `SystemdJournaldEvent`'s fields.
mod field {
    pub const PID: u32 = 1;
    pub const TID: u32 = 2;
    pub const UID: u32 = 3;
    pub const PRIO: u32 = 5;
    pub const TAG: u32 = 6;
    pub const MESSAGE: u32 = 7;
    pub const COMM: u32 = 8;
    pub const SYSTEMD_UNIT: u32 = 10;
    pub const HOSTNAME: u32 = 11;
    pub const TRANSPORT: u32 = 12;
    pub const NUM_TOTAL: u32 = 20;
    pub const NUM_FAILED: u32 = 21;
}

/// The string fields kept as args, each under its arg key.
const STRING_ARGS: [(u32, &str); 4] = [
    (field::COMM, "comm"),
    (field::SYSTEMD_UNIT, "systemd_unit"),
    (field::HOSTNAME, "hostname"),
    (field::TRANSPORT, "transport"),
];

fn import(p: &mut Parser, input: &Input<'_>) {
    let f = Fields::new(input.bytes);
    let num_total = f.uint(field::NUM_TOTAL);
    let num_failed = f.uint(field::NUM_FAILED);
    if let Some(n) = num_failed {
        p.storage.stats.set("systemd_journal_num_failed", n as i64);
    }
    if let Some(n) = num_total {
        p.storage.stats.set("systemd_journal_num_total", n as i64);
    }
    if num_total.is_some() || num_failed.is_some() {
        return;
    }
    let pid = f.uint(field::PID).map_or(0, |v| i64::from(v as u32));
    let tid = f.uint(field::TID).map_or(pid, |v| i64::from(v as u32));
    let utid = (pid != 0).then(|| p.processes.update_thread(&mut p.storage, tid, pid));
    let prio = f.uint(field::PRIO).map_or(0, |v| i64::from(v as u32));
    let tag = p.storage.strings.intern_opt(f.str(field::TAG).as_deref());
    let msg = p
        .storage
        .strings
        .intern_opt(f.str(field::MESSAGE).as_deref());

    let mut args = ArgSetBuilder::default();
    if let Some(uid) = f.uint(field::UID) {
        let k = p.storage.strings.intern("uid");
        args.add(k, k, ArgValue::Int(i64::from(uid as u32)));
    }
    for (id, key) in STRING_ARGS {
        if let Some(s) = f.str(id) {
            let v = p.storage.strings.intern(&s);
            let k = p.storage.strings.intern(key);
            args.add(k, k, ArgValue::String(v));
        }
    }
    let arg_set_id = if args.is_empty() {
        None
    } else {
        p.storage.args.add_set(&args)
    };
    let log_source = p.storage.strings.intern("systemd_journald");
    p.storage.logs.push(LogRow {
        ts: input.ts,
        utid,
        prio,
        log_source,
        tag,
        msg,
        arg_set_id,
    });
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};

    use super::field;

    /// A trace of journald packets, each written by `fill`.
    fn trace(packets: &[&dyn Fn(&mut protozero::Message<'_>)]) -> TraceProcessor {
        let mut t = Vec::new();
        for (i, fill) in packets.iter().enumerate() {
            let mut w = protozero::HeapWriter::new();
            {
                let mut p = zerotrace_protos::protos::TracePacket::from_message(w.root());
                p.set_trusted_packet_sequence_id(1);
                p.set_timestamp(1_000 + i as u64);
                let mut e = p.message().begin_nested(super::JOURNALD_EVENT);
                fill(&mut e);
            }
            let p = w.finish().expect("writer");
            t.push(0x0a);
            t.push(p.len() as u8);
            t.extend_from_slice(&p);
        }
        TraceProcessor::from_bytes(&t).expect("trace")
    }

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect("query").rows
    }

    fn text(s: &str) -> Value {
        Value::Text(s.into())
    }

    #[test]
    fn an_entry_is_a_log_row_with_its_details_as_args() {
        let tp = trace(&[&|e| {
            e.append_uint32(field::PID, 40);
            e.append_uint32(field::TID, 41);
            e.append_uint32(field::UID, 1000);
            e.append_uint32(field::PRIO, 6);
            e.append_string(field::TAG, "sshd");
            e.append_string(field::MESSAGE, "Accepted key");
            e.append_string(field::COMM, "sshd-session");
            e.append_string(field::SYSTEMD_UNIT, "ssh.service");
            e.append_string(field::HOSTNAME, "box");
            e.append_string(field::TRANSPORT, "syslog");
        }]);
        assert_eq!(
            rows(
                &tp,
                "INCLUDE PERFETTO MODULE linux.systemd_journald; \
                 SELECT l.ts, t.tid, l.prio, l.tag, l.msg, l.uid, l.comm, \
                 l.systemd_unit, l.hostname, l.transport \
                 FROM linux_systemd_journald_logs AS l JOIN thread AS t USING (utid)"
            ),
            vec![vec![
                Value::Int(1_000),
                Value::Int(41),
                Value::Int(6),
                text("sshd"),
                text("Accepted key"),
                Value::Int(1000),
                text("sshd-session"),
                text("ssh.service"),
                text("box"),
                text("syslog"),
            ]]
        );
        assert_eq!(
            rows(&tp, "SELECT log_source FROM logs"),
            vec![vec![text("systemd_journald")]]
        );
    }

    #[test]
    fn an_entry_without_a_pid_has_no_thread_and_defaults() {
        let tp = trace(&[&|e| {
            e.append_string(field::TRANSPORT, "kernel");
        }]);
        assert_eq!(
            rows(
                &tp,
                "INCLUDE PERFETTO MODULE linux.systemd_journald; \
                 SELECT utid, prio, tag, msg, uid, transport FROM linux_systemd_journald_logs"
            ),
            vec![vec![
                Value::Null,
                Value::Int(0),
                Value::Null,
                Value::Null,
                Value::Null,
                text("kernel"),
            ]]
        );
    }

    #[test]
    fn a_flushs_counters_set_the_stats_and_add_no_row() {
        let tp = trace(&[&|e| {
            e.append_uint64(field::NUM_TOTAL, 42);
            e.append_uint64(field::NUM_FAILED, 3);
        }]);
        assert_eq!(
            rows(
                &tp,
                "INCLUDE PERFETTO MODULE linux.systemd_journald; \
                 SELECT (SELECT count(*) FROM linux_systemd_journald_logs), \
                 (SELECT value FROM stats WHERE name = 'systemd_journal_num_total'), \
                 (SELECT value FROM stats WHERE name = 'systemd_journal_num_failed')"
            ),
            vec![vec![Value::Int(0), Value::Int(42), Value::Int(3)]]
        );
    }
}
