//! ELF modules shared by every process that maps the same file, so libc is
//! read once however many processes are sampled. A file is known by the
//! device and inode `/proc/PID/maps` gives (the same file in every mount
//! namespace), by its path when it has no inode, and the vdso by its size.
//! A file that failed to load is remembered too, so a missing or corrupt
//! file costs one attempt, not one per sample, until [`ModuleCache::clear`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::elf_module::{ElfError, ElfModule};
use super::maps::{Mapping, MappingKind};

/// How a module is known.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModuleKey {
    /// A file with an inode.
    Inode {
        /// Device major.
        major: u32,
        /// Device minor.
        minor: u32,
        /// Inode.
        inode: u64,
    },
    /// A file without an inode, by path.
    Path(PathBuf),
    /// The vdso, by its size.
    Vdso(u64),
}

impl ModuleKey {
    /// The key of a mapping's module; `None` for what has no ELF (anonymous
    /// memory, the stack, pseudo-regions other than the vdso).
    pub fn of(m: &Mapping) -> Option<Self> {
        match m.kind {
            MappingKind::Vdso => Some(ModuleKey::Vdso(m.end - m.start)),
            MappingKind::File if m.inode != 0 => Some(ModuleKey::Inode {
                major: m.dev_major,
                minor: m.dev_minor,
                inode: m.inode,
            }),
            MappingKind::File => m.path().map(|p| ModuleKey::Path(p.to_owned())),
            _ => None,
        }
    }
}

/// Counts of the cache's work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModuleCacheStats {
    /// Modules read and parsed successfully.
    pub loaded: u64,
    /// Files that failed to load.
    pub failed: u64,
    /// Lookups answered from the cache (a module or a remembered failure).
    pub hits: u64,
    /// Lookups that read a file.
    pub misses: u64,
}

/// Loaded modules (and failures) by key.
#[derive(Debug, Default)]
pub struct ModuleCache {
    modules: HashMap<ModuleKey, Result<Arc<ElfModule>, ElfError>>,
    stats: ModuleCacheStats,
}

impl ModuleCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The module of `key`, loading it with `load` the first time.
    pub fn get_or_load(
        &mut self,
        key: ModuleKey,
        load: impl FnOnce() -> Result<ElfModule, ElfError>,
    ) -> Result<Arc<ElfModule>, ElfError> {
        if let Some(found) = self.modules.get(&key) {
            self.stats.hits += 1;
            return found.clone();
        }
        self.stats.misses += 1;
        let loaded = load().map(Arc::new);
        match &loaded {
            Ok(_) => self.stats.loaded += 1,
            Err(_) => self.stats.failed += 1,
        }
        self.modules.insert(key, loaded.clone());
        loaded
    }

    /// How many keys are held (modules and failures).
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// Drops every module and failure (the counters stay).
    pub fn clear(&mut self) {
        self.modules.clear();
    }

    /// The counters.
    pub fn stats(&self) -> ModuleCacheStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_once_and_remembers_failures() {
        let mut c = ModuleCache::new();
        let k = ModuleKey::Path("/x".into());
        let mut calls = 0;
        for _ in 0..3 {
            let r = c.get_or_load(k.clone(), || {
                calls += 1;
                Err(ElfError::NotElf)
            });
            assert_eq!(r.unwrap_err(), ElfError::NotElf);
        }
        assert_eq!(calls, 1);
        assert_eq!(
            c.stats(),
            ModuleCacheStats {
                loaded: 0,
                failed: 1,
                hits: 2,
                misses: 1
            }
        );
        c.clear();
        assert!(c.is_empty());
    }
}
