//! The GPU tables (upstream's `__intrinsic_gpu`, `__intrinsic_gpu_counter_group`
//! and `__intrinsic_gpu_context`) that the GPU importers fill: the GPUs a
//! trace names, which group each GPU counter track belongs to, and the
//! graphics contexts render stages run in. Each row's id is its index, as
//! upstream's.

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `__intrinsic_gpu`: one GPU seen in the trace (its id is its
    /// `ugpu`), with what the trace's `gpu_info` said of it.
    pub struct GpuRow in "__intrinsic_gpu", views ["gpu"] {
        /// The GPU's index on its machine.
        gpu: Option<u32>,
        /// The machine (NULL: the host).
        machine_id: Option<u32>,
        /// Its name.
        name: StrId,
        /// Its vendor.
        vendor: StrId,
        /// Its model.
        model: StrId,
        /// Its architecture.
        architecture: StrId,
        /// Its device UUID, hex-encoded.
        uuid: StrId,
        /// Its PCI location (domain:bus:device.function).
        pci_bdf: StrId,
        /// Vendor-specific facts as args.
        arg_set_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_gpu_counter_group`: a GPU counter track in one
    /// group (a legacy group's enum value, or a producer's own group).
    pub struct GpuCounterGroupRow in "__intrinsic_gpu_counter_group",
        views ["gpu_counter_group"] {
        /// The group.
        group_id: i64,
        /// The counter's track.
        track_id: u32,
        /// The group's name (NULL for a legacy group).
        name: StrId,
        /// The group's description (NULL for a legacy group).
        description: StrId,
    }
}

table! {
    /// A row of `__intrinsic_gpu_context`: one graphics context the
    /// render stages named, with its process and API.
    pub struct GpuContextRow in "__intrinsic_gpu_context" {
        /// The context's handle.
        context_id: i64,
        /// The process that owns it.
        pid: Option<i64>,
        /// Its API (`OPEN_GL`, `VULKAN`, `OPEN_CL`, `CUDA`, `HIP` or
        /// `UNDEFINED`).
        api: StrId,
    }
}

table! {
    /// A row of `vulkan_memory_allocations`: one Vulkan memory event
    /// (`parser/vulkan_memory_event.rs`), its annotations as args.
    pub struct VulkanMemoryAllocationRow in "__intrinsic_vulkan_memory_allocations",
        views ["vulkan_memory_allocations"] {
        /// The annotations.
        arg_set_id: Option<u32>,
        /// `DRIVER`, `DEVICE`, `GPU_DEVICE_MEMORY`, `GPU_BUFFER`, `GPU_IMAGE`.
        source: StrId,
        /// `CREATE`, `DESTROY`, `BIND`, `DESTROY_BOUND`, `ANNOTATIONS`.
        operation: StrId,
        /// The event's own time.
        timestamp: i64,
        /// The process.
        upid: Option<u32>,
        /// The device.
        device: Option<i64>,
        /// The device memory.
        device_memory: Option<i64>,
        /// The memory type.
        memory_type: Option<u32>,
        /// The heap.
        heap: Option<u32>,
        /// The calling function.
        function_name: StrId,
        /// The object's handle.
        object_handle: Option<i64>,
        /// The memory's address.
        memory_address: Option<i64>,
        /// The memory's size.
        memory_size: Option<i64>,
        /// The driver allocation's scope (`COMMAND`, `OBJECT`, ...).
        scope: StrId,
    }
}

/// The GPU tables' rows as the importers fill them.
#[derive(Debug, Clone, Default)]
pub struct GpuRows {
    /// `__intrinsic_gpu`.
    pub gpus: Vec<GpuRow>,
    /// `__intrinsic_gpu_counter_group`.
    pub counter_groups: Vec<GpuCounterGroupRow>,
    /// `__intrinsic_gpu_context`.
    pub contexts: Vec<GpuContextRow>,
    /// `__intrinsic_vulkan_memory_allocations`.
    pub vulkan_memory_allocations: Vec<VulkanMemoryAllocationRow>,
}

#[cfg(feature = "sql")]
impl GpuRows {
    /// Every GPU table, frozen.
    pub fn freeze(
        &self,
        strings: &std::sync::Arc<crate::column_store::strings::StringPool>,
    ) -> Vec<crate::column_store::table::Table> {
        vec![
            GpuRow::freeze(&self.gpus, strings),
            GpuCounterGroupRow::freeze(&self.counter_groups, strings),
            GpuContextRow::freeze(&self.contexts, strings),
            VulkanMemoryAllocationRow::freeze(&self.vulkan_memory_allocations, strings),
        ]
    }
}

/// The GPU tables' declarations.
pub const TABLES: &[super::TableDecl] = &[
    GpuRow::TABLE,
    GpuCounterGroupRow::TABLE,
    GpuContextRow::TABLE,
    VulkanMemoryAllocationRow::TABLE,
];
