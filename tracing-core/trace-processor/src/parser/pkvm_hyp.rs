//! The pKVM hypervisor's ftrace events as upstream imports them: a CPU's
//! time in the hypervisor (`hyp_enter` to `hyp_exit`, and the newer
//! `hypervisor_*` twins) is a `hyp` slice of category `pkvm_hyp` on that
//! CPU's `pkVM Hypervisor CPU <n>` track, and the event that says why it
//! entered (a host hypercall, SMC, memory abort, FF-A call, IOMMU identity
//! map, PSCI memory protection, illegal vCPU trap) adds the reason
//! (`hyp_enter_reason`) and its fields as args of the open slice. The
//! `pkvm.hypervisor` module reads them.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

const HYP_ENTER: u32 = 476;
const HYP_EXIT: u32 = 477;
const HOST_HCALL: u32 = 478;
const HOST_SMC: u32 = 479;
const HOST_MEM_ABORT: u32 = 480;
const HOST_FFA_CALL: u32 = 578;
const IOMMU_IDMAP: u32 = 580;
const PSCI_MEM_PROTECT: u32 = 581;
const HYPERVISOR_HOST_HCALL: u32 = 582;
const HYPERVISOR_HOST_SMC: u32 = 583;
const HYPERVISOR_HYP_EXIT: u32 = 584;
const HYPERVISOR_IOMMU_IDMAP: u32 = 585;
const HYPERVISOR_PSCI_MEM_PROTECT: u32 = 586;
const HYPERVISOR_HOST_MEM_ABORT: u32 = 587;
const HYPERVISOR_HYP_ENTER: u32 = 588;
const HYPERVISOR_IOMMU_IDMAP_COMPLETE: u32 = 589;
const HYPERVISOR_VCPU_ILLEGAL_TRAP: u32 = 590;

/// The events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (HYP_ENTER, enter),
    (HYPERVISOR_HYP_ENTER, enter),
    (HYP_EXIT, exit),
    (HYPERVISOR_HYP_EXIT, exit),
    (HOST_HCALL, host_hcall),
    (HYPERVISOR_HOST_HCALL, host_hcall),
    (HOST_SMC, host_smc),
    (HYPERVISOR_HOST_SMC, host_smc),
    (HOST_MEM_ABORT, host_mem_abort),
    (HYPERVISOR_HOST_MEM_ABORT, host_mem_abort),
    (HOST_FFA_CALL, host_ffa_call),
    (IOMMU_IDMAP, iommu_idmap),
    (HYPERVISOR_IOMMU_IDMAP, iommu_idmap),
    (PSCI_MEM_PROTECT, psci_mem_protect),
    (HYPERVISOR_PSCI_MEM_PROTECT, psci_mem_protect),
    (HYPERVISOR_IOMMU_IDMAP_COMPLETE, iommu_idmap_complete),
    (HYPERVISOR_VCPU_ILLEGAL_TRAP, vcpu_illegal_trap),
];

/// The CPU's hypervisor track.
fn track(p: &mut Parser, cpu: u32) -> u32 {
    let name = format!("pkVM Hypervisor CPU {cpu}");
    let mut spec = TrackSpec::new(Some(&name), "pkvm_hypervisor", EventType::Slice);
    spec.dimensions = vec![("cpu", ArgValue::Int(i64::from(cpu)))];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

fn enter(p: &mut Parser, e: &FtraceInput<'_>) {
    let track_id = track(p, e.cpu);
    let category = p.storage.strings.intern("pkvm_hyp");
    let name = p.storage.strings.intern("hyp");
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id,
            category,
            name,
            ..Default::default()
        },
    );
}

fn exit(p: &mut Parser, e: &FtraceInput<'_>) {
    let track_id = track(p, e.cpu);
    p.slices.end(&mut p.storage, track_id, e.ts, None);
}

/// How a field is read into its arg.
#[derive(Clone, Copy)]
enum Kind {
    /// Unsigned.
    U,
    /// Signed 32-bit.
    I,
    /// A boolean.
    B,
}

/// Adds the reason and `fields` (name, field number, kind) of the event to
/// the CPU's open `hyp` slice, if there is one.
fn reason(p: &mut Parser, e: &FtraceInput<'_>, why: &str, fields: &[(&str, u32, Kind)]) {
    let track_id = track(p, e.cpu);
    let Some(id) = p.slices.topmost(&mut p.storage, track_id, e.ts) else {
        return;
    };
    let (category, name) = (
        p.storage.strings.intern("pkvm_hyp"),
        p.storage.strings.intern("hyp"),
    );
    let Some(row) = p.storage.slices.get(id as usize) else {
        return;
    };
    if row.category != category || row.name != name || row.dur >= 0 {
        return;
    }
    let mut b = ArgSetBuilder::default();
    if let Some(set) = row.arg_set_id.get() {
        let old: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in old {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    let why = p.storage.strings.intern(why);
    let k = p.storage.strings.intern("hyp_enter_reason");
    b.add(k, k, ArgValue::String(why));
    let d = Decoder::new(e.body);
    for &(key, field, kind) in fields {
        let f = d.find_last(field);
        let v = match kind {
            Kind::U => ArgValue::Uint(f.and_then(|f| f.as_u64().ok()).unwrap_or(0)),
            Kind::I => ArgValue::Int(i64::from(f.and_then(|f| f.as_i32().ok()).unwrap_or(0))),
            Kind::B => ArgValue::Bool(f.and_then(|f| f.as_u64().ok()).unwrap_or(0) != 0),
        };
        let k = p.storage.strings.intern(key);
        b.add(k, k, v);
    }
    let set = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}

fn host_hcall(p: &mut Parser, e: &FtraceInput<'_>) {
    reason(
        p,
        e,
        "host_hcall",
        &[("id", 1, Kind::U), ("invalid", 2, Kind::U)],
    );
}

fn host_smc(p: &mut Parser, e: &FtraceInput<'_>) {
    reason(
        p,
        e,
        "host_smc",
        &[("id", 1, Kind::U), ("forwarded", 2, Kind::U)],
    );
}

fn host_mem_abort(p: &mut Parser, e: &FtraceInput<'_>) {
    reason(
        p,
        e,
        "host_mem_abort",
        &[("esr", 1, Kind::U), ("addr", 2, Kind::U)],
    );
}

fn host_ffa_call(p: &mut Parser, e: &FtraceInput<'_>) {
    reason(
        p,
        e,
        "host_ffa_call",
        &[
            ("func_id", 1, Kind::U),
            ("handled", 6, Kind::I),
            ("err", 7, Kind::I),
        ],
    );
}

fn iommu_idmap(p: &mut Parser, e: &FtraceInput<'_>) {
    reason(
        p,
        e,
        "iommu_idmap",
        &[
            ("from", 1, Kind::U),
            ("to", 2, Kind::U),
            ("prot", 3, Kind::I),
        ],
    );
}

fn psci_mem_protect(p: &mut Parser, e: &FtraceInput<'_>) {
    reason(
        p,
        e,
        "psci_mem_protect",
        &[("count", 1, Kind::U), ("was", 2, Kind::U)],
    );
}

fn iommu_idmap_complete(p: &mut Parser, e: &FtraceInput<'_>) {
    reason(p, e, "iommu_idmap_complete", &[("map", 1, Kind::B)]);
}

fn vcpu_illegal_trap(p: &mut Parser, e: &FtraceInput<'_>) {
    reason(p, e, "vcpu_illegal_trap", &[("esr", 1, Kind::U)]);
}
