//! Vulkan memory events (`TracePacket.vulkan_memory_event`, field 62): each
//! event a row of `vulkan_memory_allocations` (its source, operation and
//! scope by name, its caller from the interned function names, its
//! annotations as args keyed by the interned Vulkan memory keys), and the
//! running totals upstream's GPU event parser keeps as counters at the
//! event's own time: the driver's memory by allocation scope
//! (`vulkan.mem.driver.scope.<SCOPE>`, created and destroyed), the device
//! memory by memory type (`vulkan.mem.device.memory.type.<n>.allocation`),
//! and the memory bound to buffers and images by memory type
//! (`...<n>.bind`). The totals are kept across processes, as upstream keeps
//! them; each counter track is the event's process's.

use protozero::{Decoder, FieldValue};

use super::Parser;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::CounterRow;
use crate::tables::gpu::VulkanMemoryAllocationRow;
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `TracePacket.vulkan_memory_event`.
const VULKAN_MEMORY_EVENT: u32 = 62;
/// `InternedData.function_names`.
const FUNCTION_NAMES: u32 = 5;
/// `InternedData.vulkan_memory_keys`.
const VULKAN_MEMORY_KEYS: u32 = 22;

const SOURCES: [&str; 6] = [
    "UNSPECIFIED",
    "DRIVER",
    "DEVICE",
    "GPU_DEVICE_MEMORY",
    "GPU_BUFFER",
    "GPU_IMAGE",
];
const OPERATIONS: [&str; 6] = [
    "UNSPECIFIED",
    "CREATE",
    "DESTROY",
    "BIND",
    "DESTROY_BOUND",
    "ANNOTATIONS",
];
const SCOPES: [&str; 6] = [
    "UNSPECIFIED",
    "COMMAND",
    "OBJECT",
    "CACHE",
    "DEVICE",
    "INSTANCE",
];

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(VULKAN_MEMORY_EVENT, import)];

/// The running totals, across processes.
#[derive(Debug, Default)]
pub struct VulkanMemoryState {
    driver: HashMap<u64, i64>,
    allocated: HashMap<u64, i64>,
    bound: HashMap<u64, i64>,
}

/// A `VulkanMemoryEvent`'s fields.
#[derive(Default)]
struct Event<'a> {
    source: u64,
    operation: u64,
    timestamp: i64,
    pid: u64,
    memory_address: Option<u64>,
    memory_size: Option<u64>,
    caller_iid: Option<u64>,
    scope: Option<u64>,
    annotations: Vec<&'a [u8]>,
    device: Option<u64>,
    device_memory: Option<u64>,
    memory_type: Option<u64>,
    heap: Option<u64>,
    object_handle: Option<u64>,
}

fn read(bytes: &[u8]) -> Event<'_> {
    let mut e = Event::default();
    for f in Decoder::new(bytes).map_while(Result::ok) {
        let n = match f.value {
            FieldValue::Varint(v) | FieldValue::Fixed64(v) => Some(v),
            FieldValue::Fixed32(v) => Some(u64::from(v)),
            _ => None,
        };
        match (f.id, n) {
            (1, Some(v)) => e.source = v,
            (2, Some(v)) => e.operation = v,
            (3, Some(v)) => e.timestamp = v as i64,
            (4, Some(v)) => e.pid = v & 0xffff_ffff,
            (5, v @ Some(_)) => e.memory_address = v,
            (6, v @ Some(_)) => e.memory_size = v,
            (7, v @ Some(_)) => e.caller_iid = v,
            (8, v @ Some(_)) => e.scope = v,
            (9, None) => e.annotations.extend(f.as_bytes().ok()),
            (16, v @ Some(_)) => e.device = v,
            (17, v @ Some(_)) => e.device_memory = v,
            (18, v @ Some(_)) => e.memory_type = v.map(|t| t & 0xffff_ffff),
            (19, v @ Some(_)) => e.heap = v.map(|h| h & 0xffff_ffff),
            (20, v @ Some(_)) => e.object_handle = v,
            _ => {}
        }
    }
    e
}

/// An interned string of `kind`, or NULL.
fn interned(p: &mut Parser, input: &Input<'_>, kind: u32, iid: u64) -> StrId {
    let text = input
        .generation
        .interned(kind, iid)
        .and_then(|m| Decoder::new(m).find_last(2))
        .and_then(|f| f.as_bytes().ok());
    match text {
        Some(t) => p.storage.strings.intern(&String::from_utf8_lossy(t)),
        None => StrId::NULL,
    }
}

fn name_of(p: &mut Parser, names: &[&str], v: u64) -> StrId {
    match names.get(v as usize) {
        Some(n) => p.storage.strings.intern(n),
        None => StrId::NULL,
    }
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let e = read(input.bytes);
    let upid = p
        .processes
        .get_or_create_process(&mut p.storage, e.pid as i64);
    let mut row = VulkanMemoryAllocationRow {
        arg_set_id: None,
        source: name_of(p, &SOURCES, e.source),
        operation: name_of(p, &OPERATIONS, e.operation),
        timestamp: e.timestamp,
        upid: Some(upid),
        device: e.device.map(|v| v as i64),
        device_memory: e.device_memory.map(|v| v as i64),
        memory_type: e.memory_type.map(|v| v as u32),
        heap: e.heap.map(|v| v as u32),
        function_name: StrId::NULL,
        object_handle: e.object_handle.map(|v| v as i64),
        memory_address: e.memory_address.map(|v| v as i64),
        memory_size: e.memory_size.map(|v| v as i64),
        scope: StrId::NULL,
    };
    if let Some(iid) = e.caller_iid {
        row.function_name = interned(p, input, FUNCTION_NAMES, iid);
    }
    if let Some(scope) = e.scope {
        row.scope = name_of(p, &SCOPES, scope);
    }
    update_counters(p, upid, &e);
    if !e.annotations.is_empty() {
        let mut b = ArgSetBuilder::default();
        for a in &e.annotations {
            let d = Decoder::new(a);
            let key_iid = d.find_last(1).and_then(|f| f.as_u64().ok()).unwrap_or(0);
            let key = interned(p, input, VULKAN_MEMORY_KEYS, key_iid);
            let value = if let Some(v) = d.find_last(2).and_then(|f| f.as_u64().ok()) {
                ArgValue::Int(v as i64)
            } else if let Some(v) = d.find_last(3).and_then(|f| f.as_fixed64().ok()) {
                ArgValue::Real(f64::from_bits(v))
            } else if let Some(iid) = d.find_last(4).and_then(|f| f.as_u64().ok()) {
                ArgValue::String(interned(p, input, VULKAN_MEMORY_KEYS, iid))
            } else {
                continue;
            };
            b.add(key, key, value);
        }
        row.arg_set_id = p.storage.args.add_set(&b);
    }
    p.storage.gpu.vulkan_memory_allocations.push(row);
}

/// The totals an event moves, and the counter each is pushed on.
fn update_counters(p: &mut Parser, upid: u32, e: &Event<'_>) {
    let size = e.memory_size.unwrap_or(0) as i64;
    let memory_type = e.memory_type.unwrap_or(0);
    let (name, classification, dimension, value) = match e.source {
        1 => {
            let scope = e.scope.unwrap_or(0);
            let Some(&scope_name) = SCOPES.get(scope as usize).filter(|_| scope != 0) else {
                return;
            };
            let delta = match e.operation {
                1 => size,
                2 => size.wrapping_neg(),
                _ => return,
            };
            let total = p.vulkan_memory.driver.entry(scope).or_insert(0);
            *total = total.wrapping_add(delta);
            let dim = ArgValue::String(p.storage.strings.intern(scope_name));
            (
                format!("vulkan.mem.driver.scope.{scope_name}"),
                "vulkan_driver_mem",
                ("vulkan_allocation_scope", dim),
                *total,
            )
        }
        3 => {
            let delta = match e.operation {
                1 => size,
                2 => size.wrapping_neg(),
                _ => return,
            };
            let total = p.vulkan_memory.allocated.entry(memory_type).or_insert(0);
            *total = total.wrapping_add(delta);
            (
                format!("vulkan.mem.device.memory.type.{memory_type}.allocation"),
                "vulkan_device_mem_allocation",
                ("vulkan_memory_type", ArgValue::Int(memory_type as i64)),
                *total,
            )
        }
        4 | 5 => {
            let delta = match e.operation {
                3 => size,
                4 => size.wrapping_neg(),
                _ => return,
            };
            let total = p.vulkan_memory.bound.entry(memory_type).or_insert(0);
            *total = total.wrapping_add(delta);
            (
                format!("vulkan.mem.device.memory.type.{memory_type}.bind"),
                "vulkan_device_mem_bind",
                ("vulkan_memory_type", ArgValue::Int(memory_type as i64)),
                *total,
            )
        }
        _ => return,
    };
    let mut spec = TrackSpec::new(Some(&name), classification, EventType::Counter);
    spec.upid = Some(upid);
    spec.dimensions = vec![dimension];
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts: e.timestamp,
        track_id,
        value: value as f64,
        arg_set_id: OptU32::NONE,
    });
}
