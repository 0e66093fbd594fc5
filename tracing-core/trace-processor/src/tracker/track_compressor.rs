//! Async slices share tracks the way upstream's track compressor shares
//! them: the slices of one kind of track (same dimensions) go on a pool of
//! tracks; a begin with a cookie that is open reuses its track, another
//! takes the first free track of the pool or a new one, and a track is free
//! again once its cookie's slices have all ended. Each track of a pool gets
//! its index in it as the `track_compressor_idx` dimension.

use crate::hash::HashMap;

/// One track of a pool.
#[derive(Debug, Clone, Copy)]
struct Slot {
    track: u32,
    /// The cookie using it and how many of its slices are open.
    owner: Option<(i64, u32)>,
}

/// The pools, by a key naming their dimensions.
#[derive(Debug, Default)]
pub struct TrackCompressor {
    pools: HashMap<String, Vec<Slot>>,
}

impl TrackCompressor {
    /// The track a cookie's slices are on while it is open, if it is.
    pub fn open_track(&self, key: &str, cookie: i64) -> Option<u32> {
        self.pools.get(key)?.iter().find_map(|s| match s.owner {
            Some((c, _)) if c == cookie => Some(s.track),
            _ => None,
        })
    }

    /// The track for a slice that begins with `cookie`; `create` makes a
    /// new track given its index in the pool.
    pub fn begin(&mut self, key: &str, cookie: i64, create: impl FnOnce(u32) -> u32) -> u32 {
        let pool = self.pools.entry(key.to_owned()).or_default();
        if let Some(s) = pool
            .iter_mut()
            .find(|s| matches!(s.owner, Some((c, _)) if c == cookie))
        {
            if let Some((_, n)) = &mut s.owner {
                *n = n.saturating_add(1);
            }
            return s.track;
        }
        if let Some(s) = pool.iter_mut().find(|s| s.owner.is_none()) {
            s.owner = Some((cookie, 1));
            return s.track;
        }
        let idx = u32::try_from(pool.len()).unwrap_or(u32::MAX);
        let track = create(idx);
        pool.push(Slot {
            track,
            owner: Some((cookie, 1)),
        });
        track
    }

    /// The track a slice ending with `cookie` ends on (None when the cookie
    /// has nothing open); the track is freed when the cookie's last slice
    /// ends.
    pub fn end(&mut self, key: &str, cookie: i64) -> Option<u32> {
        let pool = self.pools.get_mut(key)?;
        let s = pool
            .iter_mut()
            .find(|s| matches!(s.owner, Some((c, _)) if c == cookie))?;
        if let Some((_, n)) = &mut s.owner {
            *n = n.saturating_sub(1);
            if *n == 0 {
                s.owner = None;
            }
        }
        Some(s.track)
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
}
