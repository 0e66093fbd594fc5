//! `track_group_id`: upstream's track compressor numbers every pool of
//! tracks it makes (one number per pool, counted over the whole load in the
//! order the pools were made, whichever file, machine or importer made
//! them) and gives the number to each track of the pool, so that a pool's
//! tracks can be shown as one group. A pool here is made with its first
//! track, so the pools' order is their first tracks' order: the numbers
//! are given once the load is parsed.

use crate::storage::Storage;

/// Numbers `pools` (each a pool's track ids, its first made first) by
/// their first tracks' order and sets each track's `track_group_id`.
pub fn assign<'a>(storage: &mut Storage, pools: impl IntoIterator<Item = &'a [u32]>) {
    let mut firsts: Vec<(u32, &[u32])> = pools
        .into_iter()
        .filter_map(|p| Some((*p.first()?, p)))
        .collect();
    firsts.sort_unstable_by_key(|&(first, _)| first);
    for (group, (_, pool)) in firsts.into_iter().enumerate() {
        let group = u32::try_from(group).unwrap_or(u32::MAX);
        for &track in pool {
            if let Some(row) = storage.tracks.get_mut(track as usize) {
                row.track_group_id = Some(group);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::core::TrackRow;

    #[test]
    fn pools_are_numbered_in_the_order_they_were_made() {
        let mut s = Storage::default();
        s.tracks = vec![TrackRow::default(); 6];
        // Track 1 began the second pool made; tracks 0 and 4 the first;
        // track 3 is no pool's.
        assign(&mut s, [&[1u32, 2][..], &[0, 4][..], &[][..], &[5][..]]);
        let groups: Vec<_> = s.tracks.iter().map(|t| t.track_group_id).collect();
        assert_eq!(groups, [Some(0), Some(1), Some(1), None, Some(0), Some(2)]);
    }
}
