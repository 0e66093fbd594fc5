//! A kernel allocation's `gfp_flags` as the kernel's trace output names
//! them (`GFP_KERNEL|__GFP_ZERO`), for `TO_FTRACE`: the bit values and the
//! names changed across kernel releases, so the table used is the one of
//! the trace's kernel version (4.4's when the trace does not say).
//!
//! Names are tried in order, composites first; each one whose bits are all
//! set is printed and its bits taken off, and whatever is left over is
//! printed in hex after the names. A value of 0 is `GFP_NOWAIT`.

use std::fmt::Write;

use crate::tracker::task_state::KernelVersion;

/// The version assumed when the trace does not name its kernel.
const DEFAULT_VERSION: KernelVersion = (4, 4);

/// The single-bit flags of the kernels before 4.4.
mod v3 {
    pub const HIGHMEM: u64 = 0x02;
    pub const MOVABLE: u64 = 0x08;
    pub const WAIT: u64 = 0x10;
    pub const HIGH: u64 = 0x20;
    pub const IO: u64 = 0x40;
    pub const FS: u64 = 0x80;
    pub const COLD: u64 = 0x100;
    pub const NOWARN: u64 = 0x200;
    pub const REPEAT: u64 = 0x400;
    pub const NOFAIL: u64 = 0x800;
    pub const NORETRY: u64 = 0x1000;
    pub const MEMALLOC: u64 = 0x2000;
    pub const COMP: u64 = 0x4000;
    pub const ZERO: u64 = 0x8000;
    pub const NOMEMALLOC: u64 = 0x10000;
    pub const HARDWALL: u64 = 0x20000;
    pub const THISNODE: u64 = 0x40000;
    pub const RECLAIMABLE: u64 = 0x80000;
    pub const KMEMCG: u64 = 0x100000;
    pub const NOTRACK: u64 = 0x200000;
    pub const NO_KSWAPD: u64 = 0x400000;
    pub const OTHER_NODE: u64 = 0x800000;

    pub const KERNEL: u64 = WAIT | IO | FS;
    pub const USER: u64 = KERNEL | HARDWALL;
    pub const HIGHUSER: u64 = USER | HIGHMEM;
    pub const HIGHUSER_MOVABLE: u64 = HIGHUSER | MOVABLE;
    pub const TRANSHUGE: u64 = HIGHUSER_MOVABLE | COMP | NOMEMALLOC | NORETRY | NOWARN | NO_KSWAPD;
}

/// The single-bit flags from 4.4 on (where they differ, `*_4_14` is the
/// 4.14 value).
mod v4 {
    pub const DMA: u64 = 0x01;
    pub const HIGHMEM: u64 = 0x02;
    pub const DMA32: u64 = 0x04;
    pub const MOVABLE: u64 = 0x08;
    pub const RECLAIMABLE: u64 = 0x10;
    pub const HIGH: u64 = 0x20;
    pub const IO: u64 = 0x40;
    pub const FS: u64 = 0x80;
    pub const COLD: u64 = 0x100;
    pub const NOWARN: u64 = 0x200;
    pub const REPEAT: u64 = 0x400;
    pub const NOFAIL: u64 = 0x800;
    pub const NORETRY: u64 = 0x1000;
    pub const MEMALLOC: u64 = 0x2000;
    pub const COMP: u64 = 0x4000;
    pub const ZERO: u64 = 0x8000;
    pub const NOMEMALLOC: u64 = 0x10000;
    pub const HARDWALL: u64 = 0x20000;
    pub const THISNODE: u64 = 0x40000;
    pub const ATOMIC: u64 = 0x80000;
    pub const ACCOUNT_4_14: u64 = 0x100000;
    pub const NOTRACK: u64 = 0x200000;
    pub const DIRECT_RECLAIM: u64 = 0x400000;
    pub const OTHER_NODE: u64 = 0x800000;
    pub const WRITE_4_14: u64 = 0x800000;
    pub const KSWAPD_RECLAIM_4_14: u64 = 0x1000000;
    pub const KSWAPD_RECLAIM: u64 = 0x2000000;
}

/// (bits, name) in the order they are tried.
type Names = &'static [(u64, &'static str)];

/// Kernels before 3.10 (their `GFP_NOTRACK` had no bit, so it always
/// shows).
const BEFORE_3_10: Names = {
    use v3::*;
    &[
        (TRANSHUGE, "GFP_TRANSHUGE"),
        (HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
        (HIGHUSER, "GFP_HIGHUSER"),
        (USER, "GFP_USER"),
        (KERNEL | RECLAIMABLE, "GFP_TEMPORARY"),
        (KERNEL, "GFP_KERNEL"),
        (WAIT | IO, "GFP_NOFS"),
        (HIGH, "GFP_ATOMIC"),
        (WAIT, "GFP_NOIO"),
        (HIGH, "GFP_HIGH"),
        (WAIT, "GFP_WAIT"),
        (IO, "GFP_IO"),
        (COLD, "GFP_COLD"),
        (NOWARN, "GFP_NOWARN"),
        (REPEAT, "GFP_REPEAT"),
        (NOFAIL, "GFP_NOFAIL"),
        (NORETRY, "GFP_NORETRY"),
        (COMP, "GFP_COMP"),
        (ZERO, "GFP_ZERO"),
        (NOMEMALLOC, "GFP_NOMEMALLOC"),
        (HARDWALL, "GFP_HARDWALL"),
        (THISNODE, "GFP_THISNODE"),
        (RECLAIMABLE, "GFP_RECLAIMABLE"),
        (MOVABLE, "GFP_MOVABLE"),
        (0, "GFP_NOTRACK"),
        (NO_KSWAPD, "GFP_NO_KSWAPD"),
        (OTHER_NODE, "GFP_OTHER_NODE"),
    ]
};

/// Kernels 3.10 up to 4.4.
const FROM_3_10: Names = {
    use v3::*;
    &[
        (TRANSHUGE, "GFP_TRANSHUGE"),
        (HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
        (HIGHUSER, "GFP_HIGHUSER"),
        (USER, "GFP_USER"),
        (KERNEL | RECLAIMABLE, "GFP_TEMPORARY"),
        (KERNEL, "GFP_KERNEL"),
        (WAIT | IO, "GFP_NOFS"),
        (HIGH, "GFP_ATOMIC"),
        (WAIT, "GFP_NOIO"),
        (HIGH, "GFP_HIGH"),
        (WAIT, "GFP_WAIT"),
        (IO, "GFP_IO"),
        (COLD, "GFP_COLD"),
        (NOWARN, "GFP_NOWARN"),
        (REPEAT, "GFP_REPEAT"),
        (NOFAIL, "GFP_NOFAIL"),
        (NORETRY, "GFP_NORETRY"),
        (COMP, "GFP_COMP"),
        (ZERO, "GFP_ZERO"),
        (NOMEMALLOC, "GFP_NOMEMALLOC"),
        (MEMALLOC, "GFP_MEMALLOC"),
        (HARDWALL, "GFP_HARDWALL"),
        (THISNODE, "GFP_THISNODE"),
        (RECLAIMABLE, "GFP_RECLAIMABLE"),
        (KMEMCG, "GFP_KMEMCG"),
        (MOVABLE, "GFP_MOVABLE"),
        (NOTRACK, "GFP_NOTRACK"),
        (NO_KSWAPD, "GFP_NO_KSWAPD"),
        (OTHER_NODE, "GFP_OTHER_NODE"),
    ]
};

/// Kernels 4.4 up to 4.14.
const FROM_4_4: Names = {
    use v4::*;
    const RECLAIM: u64 = DIRECT_RECLAIM | KSWAPD_RECLAIM;
    const KERNEL: u64 = RECLAIM | IO | FS;
    const USER: u64 = KERNEL | HARDWALL;
    const HIGHUSER: u64 = USER | HIGHMEM;
    const HIGHUSER_MOVABLE: u64 = HIGHUSER | MOVABLE;
    &[
        (
            (HIGHUSER_MOVABLE | COMP | NOMEMALLOC | NORETRY | NOWARN) & !KSWAPD_RECLAIM,
            "GFP_TRANSHUGE",
        ),
        (HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
        (HIGHUSER, "GFP_HIGHUSER"),
        (USER, "GFP_USER"),
        (KERNEL | RECLAIMABLE, "GFP_TEMPORARY"),
        (KERNEL, "GFP_KERNEL"),
        (RECLAIM | IO, "GFP_NOFS"),
        (HIGH | ATOMIC | KSWAPD_RECLAIM, "GFP_ATOMIC"),
        (RECLAIM, "GFP_NOIO"),
        (HIGH, "GFP_HIGH"),
        (ATOMIC, "GFP_ATOMIC"),
        (IO, "GFP_IO"),
        (COLD, "GFP_COLD"),
        (NOWARN, "GFP_NOWARN"),
        (REPEAT, "GFP_REPEAT"),
        (NOFAIL, "GFP_NOFAIL"),
        (NORETRY, "GFP_NORETRY"),
        (COMP, "GFP_COMP"),
        (ZERO, "GFP_ZERO"),
        (NOMEMALLOC, "GFP_NOMEMALLOC"),
        (MEMALLOC, "GFP_MEMALLOC"),
        (HARDWALL, "GFP_HARDWALL"),
        (THISNODE, "GFP_THISNODE"),
        (RECLAIMABLE, "GFP_RECLAIMABLE"),
        (MOVABLE, "GFP_MOVABLE"),
        (NOTRACK, "GFP_NOTRACK"),
        (DIRECT_RECLAIM, "GFP_DIRECT_RECLAIM"),
        (KSWAPD_RECLAIM, "GFP_KSWAPD_RECLAIM"),
        (OTHER_NODE, "GFP_OTHER_NODE"),
    ]
};

/// Kernels from 4.14 on.
const FROM_4_14: Names = {
    use v4::*;
    const KSWAPD: u64 = KSWAPD_RECLAIM_4_14;
    const RECLAIM: u64 = DIRECT_RECLAIM | KSWAPD;
    const KERNEL: u64 = RECLAIM | IO | FS;
    const USER: u64 = KERNEL | HARDWALL;
    const HIGHUSER: u64 = USER | HIGHMEM;
    const HIGHUSER_MOVABLE: u64 = HIGHUSER | MOVABLE;
    const TRANSHUGE_LIGHT: u64 = (HIGHUSER_MOVABLE | COMP | NOMEMALLOC | NOWARN) & !RECLAIM;
    &[
        (TRANSHUGE_LIGHT | DIRECT_RECLAIM, "GFP_TRANSHUGE"),
        (TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT"),
        (HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
        (HIGHUSER, "GFP_HIGHUSER"),
        (USER, "GFP_USER"),
        (KERNEL | ACCOUNT_4_14, "GFP_KERNEL_ACCOUNT"),
        (KERNEL, "GFP_KERNEL"),
        (RECLAIM | IO, "GFP_NOFS"),
        (HIGH | ATOMIC | KSWAPD, "GFP_ATOMIC"),
        (RECLAIM, "GFP_NOIO"),
        (KSWAPD, "GFP_NOWAIT"),
        (DMA, "GFP_DMA"),
        (HIGHMEM, "__GFP_HIGHMEM"),
        (DMA32, "GFP_DMA32"),
        (HIGH, "__GFP_HIGH"),
        (ATOMIC, "__GFP_ATOMIC"),
        (IO, "__GFP_IO"),
        (FS, "__GFP_FS"),
        (COLD, "__GFP_COLD"),
        (NOWARN, "__GFP_NOWARN"),
        (REPEAT, "__GFP_RETRY_MAYFAIL"),
        (NOFAIL, "__GFP_NOFAIL"),
        (NORETRY, "__GFP_NORETRY"),
        (COMP, "__GFP_COMP"),
        (ZERO, "__GFP_ZERO"),
        (NOMEMALLOC, "__GFP_NOMEMALLOC"),
        (MEMALLOC, "__GFP_MEMALLOC"),
        (HARDWALL, "__GFP_HARDWALL"),
        (THISNODE, "__GFP_THISNODE"),
        (RECLAIMABLE, "__GFP_RECLAIMABLE"),
        (MOVABLE, "__GFP_MOVABLE"),
        (ACCOUNT_4_14, "__GFP_ACCOUNT"),
        (WRITE_4_14, "__GFP_WRITE"),
        (RECLAIM, "__GFP_RECLAIM"),
        (DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM"),
        (KSWAPD, "__GFP_KSWAPD_RECLAIM"),
    ]
};

/// The names of the kernel `version` (or the default one).
fn names(version: Option<KernelVersion>) -> Names {
    match version.unwrap_or(DEFAULT_VERSION) {
        v if v < (3, 10) => BEFORE_3_10,
        v if v < (4, 4) => FROM_3_10,
        v if v < (4, 14) => FROM_4_4,
        _ => FROM_4_14,
    }
}

/// Appends `value`'s flags, named for the kernel `version`, to `out`.
pub fn write_gfp_flags(value: u64, version: Option<KernelVersion>, out: &mut String) {
    if value == 0 {
        out.push_str("GFP_NOWAIT");
        return;
    }
    let mut left = value;
    let mut first = true;
    for &(bits, name) in names(version) {
        if left & bits != bits {
            continue;
        }
        left &= !bits;
        if !first {
            out.push('|');
        }
        out.push_str(name);
        first = false;
    }
    if left != 0 {
        if !first {
            out.push('|');
        }
        let _ = write!(out, "0x{left:x}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: u64, version: Option<KernelVersion>) -> String {
        let mut s = String::new();
        write_gfp_flags(value, version, &mut s);
        s
    }

    #[test]
    fn zero_is_nowait_on_every_kernel() {
        for v in [None, Some((3, 4)), Some((4, 4)), Some((6, 1))] {
            assert_eq!(text(0, v), "GFP_NOWAIT");
        }
    }

    #[test]
    fn composites_first_then_single_bits_then_hex() {
        // 4.14: GFP_KERNEL (direct+kswapd reclaim, io, fs) with __GFP_ZERO.
        assert_eq!(
            text(0x400000 | 0x1000000 | 0x40 | 0x80 | 0x8000, Some((5, 10))),
            "GFP_KERNEL|__GFP_ZERO"
        );
        // A bit no name covers is left over in hex.
        assert_eq!(
            text(0x8000 | 0x4000000, Some((5, 10))),
            "__GFP_ZERO|0x4000000"
        );
        assert_eq!(text(0x4000000, Some((5, 10))), "0x4000000");
    }

    #[test]
    fn the_version_picks_the_bits() {
        // 0x20 | 0x80000 | 0x2000000 is GFP_ATOMIC on 4.4, the default.
        assert_eq!(text(0x20 | 0x80000 | 0x2000000, None), "GFP_ATOMIC");
        // On 3.10 the same bits are GFP_HIGH, GFP_RECLAIMABLE and a leftover.
        assert_eq!(
            text(0x20 | 0x80000 | 0x2000000, Some((3, 10))),
            "GFP_ATOMIC|GFP_RECLAIMABLE|0x2000000"
        );
        // Before 3.10 the bitless GFP_NOTRACK always shows.
        assert_eq!(text(0x8000, Some((3, 4))), "GFP_ZERO|GFP_NOTRACK");
    }
}
