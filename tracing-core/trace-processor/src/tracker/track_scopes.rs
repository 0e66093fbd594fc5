//! Track descriptor uuids mean something only inside the file and the
//! machine that wrote them, as upstream reads them (each file, and each
//! machine a file embeds, has a reader of its own, with its own descriptor
//! tracks, sibling pools and first packets): uuid 7 of one file is not
//! uuid 7 of the next file, nor of another machine in the same file. This
//! keeps one [`TrackResolution`] per (file, machine): the one of the packet
//! being parsed is the active one, the others wait here, and the loader
//! registers descriptors in the scope of the packet it reads (which may be
//! another file's than the packet being parsed, behind the sort window).

use crate::descriptors::Descriptors;
use crate::hash::HashMap;
use crate::tracker::track_resolution::TrackResolution;

/// What scopes uuids: the file (its ordinal in an archive, 0 for a trace
/// that is no archive) and the machine index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ScopeKey {
    /// The file.
    pub file: u32,
    /// The machine index (0: the host).
    pub machine: u32,
}

/// The scopes other than the active one.
#[derive(Debug, Default)]
pub struct TrackScopes {
    /// The scope of the active [`TrackResolution`] (the parser's own).
    active: ScopeKey,
    /// The others, by scope.
    parked: HashMap<ScopeKey, Box<TrackResolution>>,
}

impl TrackScopes {
    /// Makes `key`'s resolution the active one (in `active`), parking the
    /// one that was.
    #[inline]
    pub fn select(&mut self, active: &mut Box<TrackResolution>, key: ScopeKey) {
        if key != self.active {
            self.switch(active, key);
        }
    }

    fn switch(&mut self, active: &mut Box<TrackResolution>, key: ScopeKey) {
        let next = self.parked.remove(&key).unwrap_or_default();
        let previous = std::mem::replace(active, next);
        self.parked.insert(self.active, previous);
        self.active = key;
    }

    /// Every scope's resolution, the active one (`active`) first.
    pub fn all<'a>(
        &'a self,
        active: &'a TrackResolution,
    ) -> impl Iterator<Item = &'a TrackResolution> {
        std::iter::once(active).chain(self.parked.values().map(|r| &**r))
    }

    /// The descriptors registered in `key`'s scope, if any.
    pub fn descriptors<'a>(
        &'a self,
        active: &'a TrackResolution,
        key: ScopeKey,
    ) -> Option<&'a Descriptors> {
        if key == self.active {
            Some(active.descriptors())
        } else {
            self.parked.get(&key).map(|r| r.descriptors())
        }
    }

    /// The descriptors of `key`'s scope, to register in.
    pub fn descriptors_mut<'a>(
        &'a mut self,
        active: &'a mut TrackResolution,
        key: ScopeKey,
    ) -> &'a mut Descriptors {
        if key == self.active {
            active.descriptors_mut()
        } else {
            self.parked.entry(key).or_default().descriptors_mut()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptors::{Descriptor, Registered};

    fn register(d: &mut Descriptors, uuid: u64) {
        // TrackDescriptor { uuid }.
        let mut bytes = vec![0x08];
        let mut v = uuid;
        while v >= 0x80 {
            bytes.push((v as u8) | 0x80);
            v >>= 7;
        }
        bytes.push(v as u8);
        let r = d.register(Descriptor {
            bytes,
            uuid,
            ..Descriptor::default()
        });
        assert_eq!(r, Registered::Kept);
    }

    #[test]
    fn each_file_and_machine_has_its_own_descriptors() {
        let mut active = Box::<TrackResolution>::default();
        let mut scopes = TrackScopes::default();
        let host = ScopeKey::default();
        let second_file = ScopeKey {
            file: 2,
            machine: 0,
        };
        let remote = ScopeKey {
            file: 0,
            machine: 1,
        };
        register(scopes.descriptors_mut(&mut active, host), 5);
        register(scopes.descriptors_mut(&mut active, second_file), 6);
        register(scopes.descriptors_mut(&mut active, remote), 7);
        let has = |s: &TrackScopes, a: &TrackResolution, k, uuid| {
            s.descriptors(a, k).is_some_and(|d| d.get(uuid).is_some())
        };
        assert!(has(&scopes, &active, host, 5));
        assert!(!has(&scopes, &active, host, 6));
        assert!(has(&scopes, &active, second_file, 6));
        assert!(!has(&scopes, &active, second_file, 5));
        assert!(has(&scopes, &active, remote, 7));
        // Parsing moves between scopes and keeps each one's state.
        scopes.select(&mut active, second_file);
        assert!(active.descriptors().get(6).is_some());
        assert!(active.descriptors().get(5).is_none());
        scopes.select(&mut active, host);
        assert!(active.descriptors().get(5).is_some());
        assert!(has(&scopes, &active, second_file, 6));
    }
}
