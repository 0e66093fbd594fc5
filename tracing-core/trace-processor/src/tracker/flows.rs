//! Flows between slices, with upstream's semantics for both kinds of id:
//! a v2 flow id (`flow_ids`, `terminating_flow_ids`) names one chain; a v1
//! legacy flow (phases `s`, `t`, `f`) is named by its id together with its
//! category and name, and binds to the slice open on its track, or (an
//! `f` without `bind_to_enclosing`) to the next slice that begins there.

use crate::hash::HashMap;

use crate::column_store::strings::StrId;
use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::FlowRow;

/// The flows in progress.
#[derive(Debug, Default)]
pub struct FlowTracker {
    /// Flow id → the slice the flow last reached.
    last_slice: HashMap<u64, u32>,
    /// v1 (source id, category, name) → flow id.
    v1_ids: HashMap<(u64, StrId, StrId), u64>,
    /// The category and name of each v1 flow id (args of its flows).
    v1_names: HashMap<u64, (StrId, StrId)>,
    next_v1: u64,
    /// Flows waiting for the next slice to begin on a track.
    pending: HashMap<u32, Vec<u64>>,
}

impl FlowTracker {
    /// The flow id of a v1 flow event.
    pub fn v1_id(&mut self, source_id: u64, category: StrId, name: StrId) -> u64 {
        if let Some(id) = self.v1_ids.get(&(source_id, category, name)) {
            return *id;
        }
        let id = self.next_v1;
        self.next_v1 += 1;
        self.v1_ids.insert((source_id, category, name), id);
        self.v1_names.insert(id, (category, name));
        id
    }

    /// Whether a flow has a slice it left from.
    pub fn is_active(&self, flow: u64) -> bool {
        self.last_slice.contains_key(&flow)
    }

    /// Starts a flow at `slice` (a second start counts `flow_duplicate_id`).
    pub fn begin(&mut self, storage: &mut Storage, slice: u32, flow: u64) {
        if self.last_slice.contains_key(&flow) {
            storage.stats.incr("flow_duplicate_id");
            return;
        }
        self.last_slice.insert(flow, slice);
    }

    /// Continues a flow into `slice`, which it then leaves from.
    pub fn step(&mut self, storage: &mut Storage, slice: u32, flow: u64) {
        let Some(prev) = self.last_slice.get(&flow).copied() else {
            storage.stats.incr("flow_step_without_start");
            return;
        };
        self.connect(storage, flow, prev, slice);
        self.last_slice.insert(flow, slice);
    }

    /// Ends a flow at `slice`; `close` forgets the flow afterwards.
    pub fn end(&mut self, storage: &mut Storage, slice: u32, flow: u64, close: bool) {
        let Some(prev) = self.last_slice.get(&flow).copied() else {
            storage.stats.incr("flow_end_without_start");
            return;
        };
        if close {
            self.last_slice.remove(&flow);
        }
        self.connect(storage, flow, prev, slice);
    }

    /// Ends a flow at the next slice that begins on `track`.
    pub fn end_at_next_slice(&mut self, track: u32, flow: u64) {
        self.pending.entry(track).or_default().push(flow);
    }

    /// A slice began on `track`: the flows waiting there arrive in it.
    pub fn slice_began(&mut self, storage: &mut Storage, track: u32, slice: u32) {
        let Some(flows) = self.pending.remove(&track) else {
            return;
        };
        for flow in flows {
            if let Some(prev) = self.last_slice.get(&flow).copied() {
                self.push(storage, flow, prev, slice);
            } else {
                storage.stats.incr("flow_end_without_start");
            }
        }
    }

    /// A flow between two slices, the earlier one as its source.
    fn connect(&mut self, storage: &mut Storage, flow: u64, a: u32, b: u32) {
        let ts = |id: u32| storage.slices.get(id as usize).map_or(0, |s| s.ts);
        let (out, inn) = if ts(a) > ts(b) { (b, a) } else { (a, b) };
        self.push(storage, flow, out, inn);
    }

    fn push(&mut self, storage: &mut Storage, flow: u64, out: u32, inn: u32) {
        let mut args = ArgSetBuilder::default();
        if let Some((cat, name)) = self.v1_names.get(&flow).copied() {
            let k = storage.strings.intern("name");
            args.add(k, k, ArgValue::String(name));
            let k = storage.strings.intern("cat");
            args.add(k, k, ArgValue::String(cat));
        }
        let arg_set_id = storage.args.add_set(&args);
        storage.flows.push(FlowRow {
            slice_out: out,
            slice_in: inn,
            trace_id: i64::try_from(flow).ok(),
            arg_set_id,
        });
    }
}
