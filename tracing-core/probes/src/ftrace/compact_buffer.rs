//! The columns of one bundle's `compact_sched` being collected: the comm
//! table and the per-event columns, delta-encoded as upstream writes them.

use protozero::Message;

use zerotrace_protos::protos::ftrace_event_bundle::CompactSched as CS;

/// The size of the comm fields compact_sched reads (`TASK_COMM_LEN`).
pub(super) const COMM_LEN: usize = 16;

/// The columns of one bundle's `compact_sched`, with its comm table.
#[derive(Debug, Clone, Default)]
pub(super) struct CompactBuffer {
    /// The comm table: each comm NUL-padded to 16 bytes, with its length.
    pub(super) comms: Vec<([u8; COMM_LEN], u8)>,
    pub(super) last_switch: u64,
    pub(super) switch_ts: Vec<u64>,
    pub(super) prev_state: Vec<u64>,
    pub(super) next_pid: Vec<u64>,
    pub(super) next_prio: Vec<u64>,
    pub(super) next_comm: Vec<u64>,
    pub(super) last_waking: u64,
    pub(super) waking_ts: Vec<u64>,
    pub(super) waking_pid: Vec<u64>,
    pub(super) target_cpu: Vec<u64>,
    pub(super) waking_prio: Vec<u64>,
    pub(super) waking_comm: Vec<u64>,
    pub(super) common_flags: Vec<u64>,
}

impl CompactBuffer {
    pub(super) fn reset(&mut self) {
        self.comms.clear();
        self.last_switch = 0;
        self.last_waking = 0;
        for v in [
            &mut self.switch_ts,
            &mut self.prev_state,
            &mut self.next_pid,
            &mut self.next_prio,
            &mut self.next_comm,
            &mut self.waking_ts,
            &mut self.waking_pid,
            &mut self.target_cpu,
            &mut self.waking_prio,
            &mut self.waking_comm,
            &mut self.common_flags,
        ] {
            v.clear();
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.switch_ts.is_empty() && self.waking_ts.is_empty()
    }

    /// The comm's index in the table, adding it if new (a linear scan, as
    /// upstream: the table stays small).
    pub(super) fn intern(&mut self, comm: &[u8]) -> u64 {
        let mut key = [0u8; COMM_LEN];
        let len = comm.len().min(COMM_LEN);
        key[..len].copy_from_slice(&comm[..len]);
        // Comparing whole padded arrays is comparing the strings (a comm
        // holds no NUL).
        let i = match self.comms.iter().position(|(c, _)| *c == key) {
            Some(i) => i,
            None => {
                self.comms.push((key, len as u8));
                self.comms.len() - 1
            }
        };
        i as u64
    }

    /// Writes the columns in upstream's order: the comm table, then the
    /// switch columns, then the waking ones.
    pub(super) fn write(&self, cs: &mut CS<'_>) {
        let m = cs.message();
        for (c, len) in &self.comms {
            m.append_bytes(CS::FIELD_INTERN_TABLE, &c[..usize::from(*len)]);
        }
        let packed = |m: &mut Message<'_>, id: u32, v: &[u64]| {
            if !v.is_empty() {
                m.append_packed_varint(id, v.iter().copied());
            }
        };
        packed(m, CS::FIELD_SWITCH_TIMESTAMP, &self.switch_ts);
        packed(m, CS::FIELD_SWITCH_NEXT_PID, &self.next_pid);
        packed(m, CS::FIELD_SWITCH_PREV_STATE, &self.prev_state);
        packed(m, CS::FIELD_SWITCH_NEXT_PRIO, &self.next_prio);
        packed(m, CS::FIELD_SWITCH_NEXT_COMM_INDEX, &self.next_comm);
        packed(m, CS::FIELD_WAKING_TIMESTAMP, &self.waking_ts);
        packed(m, CS::FIELD_WAKING_PID, &self.waking_pid);
        packed(m, CS::FIELD_WAKING_TARGET_CPU, &self.target_cpu);
        packed(m, CS::FIELD_WAKING_PRIO, &self.waking_prio);
        packed(m, CS::FIELD_WAKING_COMM_INDEX, &self.waking_comm);
        packed(m, CS::FIELD_WAKING_COMMON_FLAGS, &self.common_flags);
    }
}
