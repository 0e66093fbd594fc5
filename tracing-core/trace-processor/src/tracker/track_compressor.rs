//! Async slices share tracks the way upstream's track compressor shares
//! them: the slices of one kind of track (same dimensions) go on a pool of
//! tracks; a begin with a cookie that holds a track (open, or freed and
//! not taken since) reuses it, another takes the first free track of the
//! pool or a new one, and a track is free again once its cookie's slices
//! have all ended. Each track of a pool gets its index in it as the
//! `track_compressor_idx` dimension.
//!
//! A pool grows with the cookies a trace keeps open at once, so nothing
//! here walks it: open cookies are found by a map and the first free
//! track by an ordered set (a crafted trace of N open cookies was
//! quadratic when each begin searched the pool).

use std::collections::BTreeSet;

use crate::hash::HashMap;

/// One pool: its tracks, which cookie holds which, and which are free.
#[derive(Debug, Default)]
struct Pool {
    /// Track ids by index in the pool.
    tracks: Vec<u32>,
    /// Cookie → (index of the track it holds, how many of its slices are
    /// open). A cookie keeps its track once its slices have ended, until
    /// another cookie takes the track.
    open: HashMap<i64, (usize, u32)>,
    /// The cookie holding each track (None for time-placed tracks).
    owner: Vec<Option<i64>>,
    /// Indices of the cookies' tracks with no slice open.
    free: BTreeSet<usize>,
    /// Tracks of slices placed by time (`scoped`): (end of the last
    /// slice, index), the busy ones by end.
    scoped_busy: BTreeSet<(i64, usize)>,
    /// Indices of the time-placed tracks whose last slice has ended.
    scoped_free: BTreeSet<usize>,
}

/// The pools, by a key naming their dimensions.
#[derive(Debug, Default)]
pub struct TrackCompressor {
    pools: HashMap<String, Pool>,
    /// Operations done (one each: a map or set look-up, logarithmic at
    /// worst), counted into the load's work.
    steps: u64,
}

impl TrackCompressor {
    /// Operations done so far, one per call.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Each pool's tracks, by index in it (its first made first).
    pub fn pools(&self) -> impl Iterator<Item = &[u32]> {
        self.pools.values().map(|p| p.tracks.as_slice())
    }

    /// The track a cookie's slices are on while it is open, if it is.
    pub fn open_track(&mut self, key: &str, cookie: i64) -> Option<u32> {
        self.steps += 1;
        let pool = self.pools.get(key)?;
        let &(idx, n) = pool.open.get(&cookie)?;
        if n == 0 {
            return None;
        }
        pool.tracks.get(idx).copied()
    }

    /// The track for a slice that begins with `cookie`; `create` makes a
    /// new track given its index in the pool.
    pub fn begin(&mut self, key: &str, cookie: i64, create: impl FnOnce(u32) -> u32) -> u32 {
        self.steps += 1;
        let pool = match self.pools.get_mut(key) {
            Some(p) => p,
            // The key is copied only for a new pool.
            None => self.pools.entry(key.to_owned()).or_default(),
        };
        let (idx, track) = pool.hold(cookie, create);
        if let Some(entry) = pool.open.get_mut(&cookie) {
            if entry.1 == 0 {
                pool.free.remove(&idx);
            }
            entry.1 = entry.1.saturating_add(1);
        }
        track
    }

    /// The track a slice ending with `cookie` ends on, as upstream's
    /// compressor finds it: the cookie's own track even when nothing is
    /// open on it, else the first free track (taken for the cookie) or a
    /// new one. A cookie's track is freed when its last slice ends.
    pub fn end_on_any(&mut self, key: &str, cookie: i64, create: impl FnOnce(u32) -> u32) -> u32 {
        self.steps += 1;
        let pool = match self.pools.get_mut(key) {
            Some(p) => p,
            // The key is copied only for a new pool.
            None => self.pools.entry(key.to_owned()).or_default(),
        };
        let (idx, track) = pool.hold(cookie, create);
        if let Some(entry) = pool.open.get_mut(&cookie) {
            if entry.1 > 0 {
                entry.1 -= 1;
                if entry.1 == 0 {
                    pool.free.insert(idx);
                }
            }
        }
        track
    }

    /// The pool's first track (its index 0), made free for any cookie when
    /// the pool has none: the track that stands for the whole pool, as
    /// the parent of other tracks.
    pub fn first_track(&mut self, key: &str, create: impl FnOnce(u32) -> u32) -> u32 {
        self.steps += 1;
        let pool = match self.pools.get_mut(key) {
            Some(p) => p,
            // The key is copied only for a new pool.
            None => self.pools.entry(key.to_owned()).or_default(),
        };
        if let Some(&t) = pool.tracks.first() {
            return t;
        }
        // Held by cookie 0 with nothing open, as upstream's default track.
        pool.hold(0, create).1
    }

    /// The track for a slice of known extent (`ts`, `dur`) placed by time,
    /// as upstream's compressor places scoped slices: the first
    /// time-placed track of the pool whose last slice ended by `ts`, or a
    /// new one (these tracks are never a cookie's). `ts` must not go
    /// backwards between calls on one pool (the sort gives that order).
    pub fn scoped(&mut self, key: &str, ts: i64, dur: i64, create: impl FnOnce(u32) -> u32) -> u32 {
        self.steps += 1;
        let pool = match self.pools.get_mut(key) {
            Some(p) => p,
            // The key is copied only for a new pool.
            None => self.pools.entry(key.to_owned()).or_default(),
        };
        while let Some(&(end, idx)) = pool.scoped_busy.first() {
            if end > ts {
                break;
            }
            self.steps += 1;
            pool.scoped_busy.pop_first();
            pool.scoped_free.insert(idx);
        }
        let end = ts.saturating_add(dur.max(0));
        if let Some(idx) = pool.scoped_free.pop_first() {
            if let Some(&t) = pool.tracks.get(idx) {
                pool.scoped_busy.insert((end, idx));
                return t;
            }
        }
        let idx = pool.tracks.len();
        let track = create(u32::try_from(idx).unwrap_or(u32::MAX));
        pool.tracks.push(track);
        pool.owner.push(None);
        pool.scoped_busy.insert((end, idx));
        track
    }

    /// The track a slice ending with `cookie` ends on (None when the cookie
    /// has nothing open); the track is freed when the cookie's last slice
    /// ends.
    pub fn end(&mut self, key: &str, cookie: i64) -> Option<u32> {
        self.steps += 1;
        let pool = self.pools.get_mut(key)?;
        let (idx, n) = pool.open.get_mut(&cookie)?;
        if *n == 0 {
            return None;
        }
        let idx = *idx;
        *n -= 1;
        if *n == 0 {
            pool.free.insert(idx);
        }
        pool.tracks.get(idx).copied()
    }
}

impl Pool {
    /// The track `cookie` holds (its index and id), else the first free
    /// track, which the cookie takes from its last holder, else a new
    /// track; the count of open slices is left to the caller.
    fn hold(&mut self, cookie: i64, create: impl FnOnce(u32) -> u32) -> (usize, u32) {
        if let Some(&(idx, _)) = self.open.get(&cookie) {
            if let Some(&t) = self.tracks.get(idx) {
                return (idx, t);
            }
        }
        if let Some(&idx) = self.free.first() {
            if let Some(&t) = self.tracks.get(idx) {
                if let Some(old) = self.owner.get_mut(idx).and_then(|o| o.replace(cookie)) {
                    self.open.remove(&old);
                }
                self.open.insert(cookie, (idx, 0));
                return (idx, t);
            }
        }
        let idx = self.tracks.len();
        let track = create(u32::try_from(idx).unwrap_or(u32::MAX));
        self.tracks.push(track);
        self.owner.push(Some(cookie));
        self.open.insert(cookie, (idx, 0));
        self.free.insert(idx);
        (idx, track)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_cookies_get_their_own_tracks_and_freed_ones_are_reused() {
        let mut c = TrackCompressor::default();
        let mut next = 100;
        let mut mk = |_idx: u32| {
            next += 1;
            next
        };
        let a = c.begin("k", 1, &mut mk);
        let b = c.begin("k", 2, &mut mk);
        assert_ne!(a, b);
        assert_eq!(c.begin("k", 1, &mut mk), a);
        assert_eq!(c.end("k", 1), Some(a));
        assert_eq!(c.open_track("k", 1), Some(a));
        assert_eq!(c.end("k", 1), Some(a));
        assert_eq!(c.open_track("k", 1), None);
        // Cookie 3 takes the freed first track.
        assert_eq!(c.begin("k", 3, &mut mk), a);
        assert_eq!(c.end("k", 9), None);
        // Another pool is apart.
        assert_ne!(c.begin("other", 1, &mut mk), a);
    }

    /// Slices placed by time share a pool with cookies' tracks but never
    /// their tracks: each takes the first time-placed track free at its
    /// start.
    #[test]
    fn scoped_slices_take_the_first_track_free_at_their_start() {
        let mut c = TrackCompressor::default();
        let mut next = 0;
        let mut mk = |_idx: u32| {
            next += 1;
            next
        };
        let cookie = c.begin("k", 7, &mut mk);
        let a = c.scoped("k", 10, 5, &mut mk);
        assert_ne!(a, cookie);
        // Overlaps a: a new track.
        let b = c.scoped("k", 12, 0, &mut mk);
        assert_ne!(b, a);
        // Both free by 15: the first again, then the second while the
        // first is busy.
        assert_eq!(c.scoped("k", 15, 3, &mut mk), a);
        assert_eq!(c.scoped("k", 16, 0, &mut mk), b);
        assert_eq!(c.scoped("k", 18, 0, &mut mk), a);
        // The cookie's track is still its own.
        assert_eq!(c.end("k", 7), Some(cookie));
    }

    /// Many cookies open at once, then each ended and begun again: the
    /// steps grow with the calls, not with the calls times the open
    /// cookies, and freed tracks are taken lowest index first.
    #[test]
    fn many_open_cookies_cost_one_step_per_call() {
        let mut c = TrackCompressor::default();
        let mut next = 0;
        let mut mk = |_idx: u32| {
            next += 1;
            next
        };
        for cookie in 0..5000 {
            c.begin("k", cookie, &mut mk);
        }
        for cookie in 0..5000 {
            assert_eq!(c.open_track("k", cookie), Some(cookie as u32 + 1));
        }
        assert_eq!(c.end("k", 7), Some(8));
        assert_eq!(c.end("k", 3), Some(4));
        assert_eq!(c.begin("k", 9000, &mut mk), 4);
        assert_eq!(c.begin("k", 9001, &mut mk), 8);
        assert_eq!(c.steps(), 10_004);
    }
}
