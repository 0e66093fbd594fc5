//! The fields of a `tracing` span or event as the Layer keeps them: each
//! value recorded through `tracing`'s visitor, strings in one text buffer
//! per span (so a span's fields cost one allocation, reused when its slot
//! is), and turned into debug annotations without copying when its slices
//! are written.

use std::fmt;

use tracing::field::{Field, Visit};
use zerotrace_protos::protos::TrackEvent;

use super::debug_value::DebugValue;
use super::event_writer::Annotations;

/// A field's value, kept until the span is entered (strings live in the
/// owner's text buffer, as a range).
#[derive(Debug, Clone, Copy)]
pub(super) enum Owned {
    Int(i64),
    Uint(u64),
    Double(f64),
    Bool(bool),
    Str(u32, u32),
}

/// Fields of a span or event: values, and one buffer for all their text
/// (so a span with string fields costs one allocation, reused via the pool).
#[derive(Debug, Default)]
pub(super) struct Fields {
    pub(super) values: Vec<(&'static str, Owned)>,
    pub(super) text: String,
}

impl Fields {
    fn push_text(&mut self, f: &Field, write: impl FnOnce(&mut String)) {
        let start = self.text.len() as u32;
        write(&mut self.text);
        let end = self.text.len() as u32;
        self.values.push((f.name(), Owned::Str(start, end)));
    }

    #[inline]
    pub(super) fn value(&self, v: Owned) -> DebugValue<'_> {
        match v {
            Owned::Int(v) => DebugValue::Int(v),
            Owned::Uint(v) => DebugValue::Uint(v),
            Owned::Double(v) => DebugValue::Double(v),
            Owned::Bool(v) => DebugValue::Bool(v),
            Owned::Str(a, b) => {
                DebugValue::Str(self.text.get(a as usize..b as usize).unwrap_or(""))
            }
        }
    }

    pub(super) fn clear(&mut self) {
        self.values.clear();
        self.text.clear();
    }

    /// Appends `other`'s fields (their text moved into this buffer).
    pub(super) fn append(&mut self, other: &Fields) {
        let base = self.text.len() as u32;
        self.text.push_str(&other.text);
        self.values
            .extend(other.values.iter().map(|&(k, v)| match v {
                Owned::Str(a, b) => (k, Owned::Str(a + base, b + base)),
                v => (k, v),
            }));
    }

    /// Runs `f` with the fields as annotations, on the stack when few.
    pub(super) fn with_annotations<R>(
        &self,
        f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R,
    ) -> R {
        self.with_annotations_where(0, |_, _| true, f)
    }

    /// [`Self::with_annotations`] for the fields recorded from the
    /// `from`th on.
    pub(super) fn with_annotations_from<R>(
        &self,
        from: usize,
        f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R,
    ) -> R {
        self.with_annotations_where(from, |_, _| true, f)
    }

    /// Runs `f` with `kept` (at most `N`) as annotations in an array.
    #[inline]
    fn on_stack<'s, const N: usize, R>(
        &'s self,
        kept: impl Iterator<Item = &'s (&'static str, Owned)>,
        f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R,
    ) -> R {
        let mut buf = [("", DebugValue::Bool(false)); N];
        let mut n = 0;
        for ((k, v), slot) in kept.zip(buf.iter_mut()) {
            *slot = (*k, self.value(*v));
            n += 1;
        }
        f(buf.get(..n).unwrap_or(&[]))
    }

    /// [`Self::with_annotations`] for the fields from the `from`th on that
    /// pass `keep`.
    pub(super) fn with_annotations_where<R>(
        &self,
        from: usize,
        keep: impl Fn(&str, &Owned) -> bool,
        f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R,
    ) -> R {
        let values = self.values.get(from..).unwrap_or(&[]);
        let kept = values.iter().filter(|(k, v)| keep(k, v));
        let count = kept.clone().count();
        if count == 0 {
            // Most slice ends: nothing to annotate, no buffer to fill.
            return f(&[]);
        }
        // On the stack when few, in an array no larger than needs filling.
        if count <= 2 {
            self.on_stack::<2, R>(kept, f)
        } else if count <= 8 {
            self.on_stack::<8, R>(kept, f)
        } else {
            let all: Vec<_> = kept.map(|(k, v)| (*k, self.value(*v))).collect();
            f(&all)
        }
    }
}

/// A span's fields as the annotations of its slices' begins, read in
/// place (no slice of them is built on the fast path).
impl Annotations for Fields {
    #[inline]
    fn count(&self) -> usize {
        self.values.len()
    }
    #[inline]
    fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.values.iter().map(|(k, _)| *k)
    }
    #[inline]
    fn write(&self, iids: &[u64], e: &mut TrackEvent<'_>) {
        for (iid, (_, v)) in iids.iter().zip(&self.values) {
            let mut a = e.add_debug_annotations();
            a.set_name_iid(*iid);
            // Straight from the kept value (as `write_value` writes each).
            match *v {
                Owned::Int(x) => {
                    a.set_int_value(x);
                }
                Owned::Uint(x) => {
                    a.set_uint_value(x);
                }
                Owned::Double(x) => {
                    a.set_double_value(x);
                }
                Owned::Bool(x) => {
                    a.set_bool_value(x);
                }
                Owned::Str(from, to) => {
                    a.set_string_value(self.text.get(from as usize..to as usize).unwrap_or(""));
                }
            }
        }
    }
    #[inline]
    fn with_slice<R>(&self, f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R) -> R {
        self.with_annotations(f)
    }
}

impl Visit for Fields {
    fn record_i64(&mut self, f: &Field, v: i64) {
        self.values.push((f.name(), Owned::Int(v)));
    }
    fn record_u64(&mut self, f: &Field, v: u64) {
        self.values.push((f.name(), Owned::Uint(v)));
    }
    fn record_f64(&mut self, f: &Field, v: f64) {
        self.values.push((f.name(), Owned::Double(v)));
    }
    fn record_bool(&mut self, f: &Field, v: bool) {
        self.values.push((f.name(), Owned::Bool(v)));
    }
    fn record_str(&mut self, f: &Field, v: &str) {
        self.push_text(f, |t| t.push_str(v));
    }
    fn record_debug(&mut self, f: &Field, v: &dyn fmt::Debug) {
        use std::fmt::Write;
        self.push_text(f, |t| {
            let _ = write!(t, "{v:?}");
        });
    }
}
