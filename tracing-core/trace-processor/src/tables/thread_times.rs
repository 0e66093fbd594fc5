//! A slice's thread time and instruction counts (`thread_ts`,
//! `thread_dur`, `thread_instruction_count`, `thread_instruction_delta`),
//! kept apart from the slice rows by slice id. Most slices have none: four
//! nullable integers in every row were more than half of it, and even a
//! boxed copy cost every row 8 bytes and each timed slice an allocation.
//! Here a timed slice costs 40 bytes and an untimed one nothing; the four
//! columns are built from this table when the slice table freezes.

use std::collections::BTreeMap;

/// A slice's thread time and instruction counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadTimes {
    /// Thread time at the start.
    pub ts: Option<i64>,
    /// Thread time spent.
    pub dur: Option<i64>,
    /// Instruction count at the start.
    pub instruction_count: Option<i64>,
    /// Instructions spent.
    pub instruction_delta: Option<i64>,
}

impl ThreadTimes {
    /// Whether no value is set.
    pub fn is_empty(&self) -> bool {
        *self == ThreadTimes::default()
    }

    fn pack(self) -> Packed {
        let mut p = Packed::default();
        for (i, v) in [
            self.ts,
            self.dur,
            self.instruction_count,
            self.instruction_delta,
        ]
        .into_iter()
        .enumerate()
        {
            if let (Some(v), Some(slot)) = (v, p.values.get_mut(i)) {
                *slot = v;
                p.present |= 1 << i;
            }
        }
        p
    }
}

/// [`ThreadTimes`] in 33 bytes: the four values and which are present.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Packed {
    values: [i64; 4],
    present: u8,
}

impl Packed {
    fn value(&self, i: usize) -> Option<i64> {
        (self.present & (1 << i) != 0)
            .then(|| self.values.get(i).copied())
            .flatten()
    }

    fn unpack(&self) -> ThreadTimes {
        ThreadTimes {
            ts: self.value(0),
            dur: self.value(1),
            instruction_count: self.value(2),
            instruction_delta: self.value(3),
        }
    }
}

/// Which of the four columns a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadTimesColumn {
    /// `thread_ts`.
    Ts = 0,
    /// `thread_dur`.
    Dur = 1,
    /// `thread_instruction_count`.
    InstructionCount = 2,
    /// `thread_instruction_delta`.
    InstructionDelta = 3,
}

/// The thread times of the slices that have some, by slice id.
///
/// Slices get their times as they are made, so ids nearly always come in
/// ascending order: those are appended to a sorted vector (40 bytes each,
/// found by binary search). An id that comes after a greater one (a
/// slice given times once later ones exist) waits in a map, so no order
/// of the input makes the insertions quadratic.
#[derive(Debug, Default, Clone)]
pub struct SliceThreadTimes {
    /// By ascending slice id.
    ascending: Vec<(u32, Packed)>,
    /// The ids that came after a greater one.
    late: BTreeMap<u32, Packed>,
}

impl SliceThreadTimes {
    /// Whether no slice has thread times.
    pub fn is_empty(&self) -> bool {
        self.ascending.is_empty() && self.late.is_empty()
    }

    /// Slice `id`'s thread times (all `None` when it has none).
    pub fn get(&self, id: u32) -> ThreadTimes {
        self.find(id).map(Packed::unpack).unwrap_or_default()
    }

    fn find(&self, id: u32) -> Option<&Packed> {
        match self.ascending.binary_search_by_key(&id, |e| e.0) {
            Ok(i) => self.ascending.get(i).map(|e| &e.1),
            Err(_) => self.late.get(&id),
        }
    }

    /// Changes slice `id`'s thread times by `f` (keeping nothing when no
    /// value is left and the slice had none).
    pub fn update(&mut self, id: u32, f: impl FnOnce(&mut ThreadTimes)) {
        let mut t = self.get(id);
        f(&mut t);
        self.set(id, t);
    }

    /// Sets slice `id`'s thread times to `t`.
    pub fn set(&mut self, id: u32, t: ThreadTimes) {
        let packed = t.pack();
        if let Ok(i) = self.ascending.binary_search_by_key(&id, |e| e.0) {
            if let Some(e) = self.ascending.get_mut(i) {
                e.1 = packed;
            }
            return;
        }
        if let Some(e) = self.late.get_mut(&id) {
            *e = packed;
            return;
        }
        if t.is_empty() {
            return;
        }
        if self.ascending.last().is_none_or(|e| e.0 < id) {
            self.ascending.push((id, packed));
        } else {
            self.late.insert(id, packed);
        }
    }

    /// One column's values for slices `0..len`, in id order (walked more
    /// than once by the column's freeze).
    pub fn column(
        &self,
        which: ThreadTimesColumn,
        len: usize,
    ) -> impl ExactSizeIterator<Item = Option<i64>> + Clone + '_ {
        let i = which as usize;
        (0..len).map(move |row| {
            let id = u32::try_from(row).ok()?;
            self.find(id)?.value(i)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_back_in_any_order_of_ids() {
        let mut t = SliceThreadTimes::default();
        assert!(t.is_empty());
        t.update(5, |x| x.ts = Some(50));
        t.update(9, |x| x.instruction_delta = Some(i64::MIN));
        t.update(2, |x| x.dur = Some(-1));
        t.update(5, |x| x.dur = Some(7));
        t.update(3, |_| {});
        assert_eq!(t.get(5).ts, Some(50));
        assert_eq!(t.get(5).dur, Some(7));
        assert_eq!(t.get(9).instruction_delta, Some(i64::MIN));
        assert_eq!(t.get(2).dur, Some(-1));
        assert!(t.get(3).is_empty());
        assert!(t.get(4).is_empty());
        let ts: Vec<Option<i64>> = t.column(ThreadTimesColumn::Ts, 6).collect();
        assert_eq!(ts, [None, None, None, None, None, Some(50)]);
        let dur: Vec<Option<i64>> = t.column(ThreadTimesColumn::Dur, 11).collect();
        assert_eq!(dur.iter().flatten().count(), 2);
        assert_eq!(dur.get(2), Some(&Some(-1)));
        t.set(5, ThreadTimes::default());
        assert!(t.get(5).is_empty());
    }
}
