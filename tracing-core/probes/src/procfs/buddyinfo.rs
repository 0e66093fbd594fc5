//! `/proc/buddyinfo`: per memory node and zone, how many free blocks of
//! each order (2^order pages) the buddy allocator holds, as
//! `Node 0, zone   Normal   12   7   3 ...`.

use super::ProcError;

const FILE: &str = "/proc/buddyinfo";

/// One node/zone line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuddyZone {
    /// The node number as printed (`0`).
    pub node: String,
    /// The zone name (`DMA`, `DMA32`, `Normal`, `Movable`).
    pub zone: String,
    /// Free blocks per order, order 0 first.
    pub order_pages: Vec<u32>,
}

/// Parses `/proc/buddyinfo`.
pub fn parse(bytes: &[u8]) -> Result<Vec<BuddyZone>, ProcError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ProcError::malformed(FILE, "not text"))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_ascii_whitespace();
        let bad =
            || ProcError::malformed(FILE, format!("not `Node N, zone Z counts`: {line:.60?}"));
        let (Some("Node"), Some(node), Some("zone"), Some(zone)) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err(bad());
        };
        let order_pages = words
            .map(|w| w.parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        out.push(BuddyZone {
            node: node.trim_end_matches(',').to_owned(),
            zone: zone.to_owned(),
            order_pages,
        });
    }
    Ok(out)
}
