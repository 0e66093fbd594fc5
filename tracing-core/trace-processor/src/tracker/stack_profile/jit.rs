//! The stack-profile tracker's view of each process's address space, as
//! upstream's mapping tracker keeps it: the process's own mappings by
//! address (a newer one trimming what it overlaps), the ranges JIT caches
//! own, and which mappings overlap such a range ("jitted"). A frame in a
//! jitted mapping is resolved by the JIT cache at its address at the time
//! it is seen, so it is never cached by interned id; an address in a JIT
//! range outside any mapping gets a mapping made for the cache.

use super::{MappingParams, StackProfileTracker};
use crate::hash::{HashMap, HashSet};
use crate::storage::Storage;
use crate::tracker::address_range::{AddressRange, AddressRangeMap};
use crate::tracker::jit_cache::JitCache;

/// Where a process's own mapping lies, to turn its pcs into addresses.
#[derive(Debug, Clone, Copy)]
struct Placement {
    upid: u32,
    start: u64,
    end: u64,
    exact_offset: u64,
    load_bias: u64,
}

impl Placement {
    /// The address of a pc relative to the mapping.
    fn address_of(self, rel_pc: u64) -> u64 {
        rel_pc.wrapping_add(
            self.start
                .wrapping_sub(self.exact_offset)
                .wrapping_sub(self.load_bias),
        )
    }
}

/// Each process's mappings by address and the JIT caches over them.
#[derive(Debug, Default)]
pub(super) struct UserMappings {
    /// A process's own mappings (ids) by the addresses each still owns.
    by_upid: HashMap<u32, AddressRangeMap<u32>>,
    /// The same pieces less those of mappings already jitted (some
    /// pieces of a jitted mapping may stay until a JIT range meets them):
    /// a new JIT range walks and removes only these, so no piece is
    /// walked twice however many ranges come.
    unmarked: HashMap<u32, AddressRangeMap<u32>>,
    /// The JIT caches (indices into `caches`) of a process by range.
    jit_ranges: HashMap<u32, AddressRangeMap<usize>>,
    /// Mappings that overlap a JIT range.
    jitted: HashSet<u32>,
    /// Where each of the processes' own mappings lies.
    placements: HashMap<u32, Placement>,
    /// Every JIT cache made.
    caches: Vec<JitCache>,
}

impl StackProfileTracker {
    /// A new mapping of process `upid` (never shared): the addresses it
    /// covers are its process's from now on, and it is jitted when a JIT
    /// range overlaps it.
    pub(super) fn add_user_mapping(
        &mut self,
        storage: &mut Storage,
        upid: u32,
        params: &MappingParams,
    ) -> u32 {
        let id = self.add_mapping(storage, params);
        let range = AddressRange::new(params.start, params.end);
        let user = &mut self.user_mappings;
        user.by_upid
            .entry(upid)
            .or_default()
            .trim_overlaps_and_emplace(range, id);
        user.placements.insert(
            id,
            Placement {
                upid,
                start: params.start,
                end: params.end,
                exact_offset: params.exact_offset,
                load_bias: params.load_bias,
            },
        );
        let unmarked = user.unmarked.entry(upid).or_default();
        unmarked.trim_overlaps_and_emplace(range, id);
        if user
            .jit_ranges
            .get(&upid)
            .is_some_and(|j| j.overlapping(range).next().is_some())
        {
            user.jitted.insert(id);
            unmarked.remove_at(range.start);
        }
        id
    }

    /// Makes a JIT cache named `name` owning `range` of process `upid`
    /// (taking the range from any cache it overlaps); the process's
    /// mappings it overlaps become jitted. Returns the cache's index.
    pub fn create_jit_cache(
        &mut self,
        name: &'static str,
        upid: u32,
        range: AddressRange,
    ) -> usize {
        let user = &mut self.user_mappings;
        let index = user.caches.len();
        user.caches.push(JitCache::new(name, range));
        user.jit_ranges
            .entry(upid)
            .or_default()
            .trim_overlaps_and_emplace(range, index);
        if let Some(unmarked) = user.unmarked.get_mut(&upid) {
            let met: Vec<u64> = unmarked.overlapping(range).map(|(r, _)| r.start).collect();
            for start in met {
                if let Some((_, id)) = unmarked.remove_at(start) {
                    user.jitted.insert(id);
                }
            }
        }
        index
    }

    /// The JIT cache of an index [`Self::create_jit_cache`] returned.
    pub fn jit_cache_mut(&mut self, index: usize) -> Option<&mut JitCache> {
        self.user_mappings.caches.get_mut(index)
    }

    /// The mapping of process `upid` holding `address`, with its range;
    /// an address only a JIT cache owns gets a new mapping of the cache's
    /// range, named after it.
    pub fn find_user_mapping(
        &mut self,
        storage: &mut Storage,
        upid: u32,
        address: u64,
    ) -> Option<(u32, AddressRange)> {
        let user = &self.user_mappings;
        if let Some((owned, id)) = user.by_upid.get(&upid).and_then(|m| m.find(address)) {
            let range = user
                .placements
                .get(id)
                .map_or(owned, |p| AddressRange::new(p.start, p.end));
            return Some((*id, range));
        }
        let (_, index) = user.jit_ranges.get(&upid)?.find(address)?;
        let cache = user.caches.get(*index)?;
        let range = cache.range();
        let params = MappingParams {
            start: range.start,
            end: range.end,
            name: format!("[jit: {}]", cache.name()),
            ..MappingParams::default()
        };
        let id = self.add_user_mapping(storage, upid, &params);
        Some((id, range))
    }

    /// Whether a mapping overlaps a JIT range (its frames then depend on
    /// the time they are seen).
    pub(super) fn is_jitted(&self, mapping: u32) -> bool {
        self.user_mappings.jitted.contains(&mapping)
    }

    /// The frame the JIT cache at a jitted mapping's pc makes of it, and
    /// whether it is new; None when the mapping is not jitted or no cache
    /// owns the address.
    pub(super) fn jit_frame(
        &mut self,
        storage: &mut Storage,
        mapping: u32,
        rel_pc: u64,
        function_name: &str,
    ) -> Option<u32> {
        if !self.is_jitted(mapping) {
            return None;
        }
        let user = &mut self.user_mappings;
        let placement = *user.placements.get(&mapping)?;
        let address = placement.address_of(rel_pc);
        let (_, index) = user.jit_ranges.get(&placement.upid)?.find(address)?;
        let cache = user.caches.get_mut(*index)?;
        let (id, new) = cache.intern_frame(storage, mapping, rel_pc, address, function_name);
        if new && let Some(m) = self.mapping_states.get_mut(mapping as usize) {
            m.frames_by_rel_pc.entry(rel_pc).or_default().push(id);
        }
        Some(id)
    }
}
