//! The string pool: every string a table holds is stored once and referred
//! to by a 32-bit id, so string columns are plain integer vectors.

use crate::hash::HashMap;
use std::sync::Arc;

/// A pooled string's id; [`StrId::NULL`] is SQL's NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct StrId(pub u32);

impl StrId {
    /// No string (NULL).
    pub const NULL: StrId = StrId(0);

    /// Whether this is NULL.
    pub fn is_null(self) -> bool {
        self.0 == 0
    }
}

/// Interns strings; id 0 is NULL.
#[derive(Debug)]
pub struct StringPool {
    strings: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, StrId>,
}

impl Default for StringPool {
    fn default() -> Self {
        StringPool {
            strings: vec![Arc::from("")],
            ids: HashMap::default(),
        }
    }
}

impl StringPool {
    /// The id of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(id) = self.ids.get(s) {
            return *id;
        }
        let id = StrId(u32::try_from(self.strings.len()).unwrap_or(u32::MAX));
        let arc: Arc<str> = Arc::from(s);
        self.strings.push(arc.clone());
        self.ids.insert(arc, id);
        id
    }

    /// The id of `s` when present, NULL for `None`.
    pub fn intern_opt(&mut self, s: Option<&str>) -> StrId {
        s.map_or(StrId::NULL, |s| self.intern(s))
    }

    /// The id of `s` when already pooled.
    pub fn find(&self, s: &str) -> Option<StrId> {
        self.ids.get(s).copied()
    }

    /// The string of an id (None for NULL or an unknown id).
    pub fn get(&self, id: StrId) -> Option<&str> {
        if id.is_null() {
            return None;
        }
        self.strings.get(id.0 as usize).map(|s| &**s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_once() {
        let mut p = StringPool::default();
        let a = p.intern("a");
        assert_eq!(p.intern("a"), a);
        assert_ne!(p.intern("b"), a);
        assert_eq!(p.get(a), Some("a"));
        assert_eq!(p.get(StrId::NULL), None);
        assert_eq!(p.intern(""), p.intern(""));
        assert!(!p.intern("").is_null());
    }
}
