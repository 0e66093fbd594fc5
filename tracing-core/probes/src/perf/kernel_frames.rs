//! Kernel callchain frames that carry no kernel address (issue 47): a
//! sampled kernel instruction pointer would tell any reader of the trace
//! where the kernel was loaded, defeating KASLR. As `traced_perf` does,
//! each kernel frame is named from `/proc/kallsyms` at record time and
//! written with `rel_pc` 0 in the one kernel mapping (no range, no load
//! bias), so two IPs in the same function are one interned frame. An IP no
//! symbol covers (addresses hidden by `kptr_restrict`, an unknown address,
//! one too far past its symbol) gets the empty name, as upstream's lookup
//! gives: all such frames are the one unnamed kernel frame.

use crate::ftrace::ksyms::KernelSymbols;
use crate::perf::intern::{FrameDesc, MappingDesc};

/// How far past its symbol's start an address may lie and still be named
/// by it (upstream's bound: further than this it is most likely not code
/// of the last symbol before it).
pub const MAX_SYMBOL_SIZE: u64 = 1024 * 1024;

/// The name of the kernel function containing `ip`, or `None` where no
/// symbol covers it (no table, hidden addresses, unknown or too far).
pub fn kernel_function(symbols: Option<&KernelSymbols>, ip: u64) -> Option<&str> {
    symbols?
        .lookup(ip)
        .filter(|&(_, offset)| offset <= MAX_SYMBOL_SIZE)
        .map(|(name, _)| name)
}

/// The frame of kernel instruction pointer `ip`: its function's name (or
/// none), `rel_pc` 0, in the kernel mapping. Nothing of `ip` itself is kept.
pub fn kernel_frame(symbols: Option<&KernelSymbols>, ip: u64) -> FrameDesc {
    FrameDesc {
        mapping: MappingDesc::kernel(),
        rel_pc: 0,
        function: kernel_function(symbols, ip).map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KALLSYMS: &str = "\
ffffffff81000000 T _text
ffffffff81001000 T do_syscall_64
ffffffff81002000 t ksys_read
ffffffff81400000 T _etext
";

    #[test]
    fn a_kernel_frame_keeps_its_name_and_no_address() {
        let k = KernelSymbols::parse(KALLSYMS).expect("parse");
        let a = kernel_frame(Some(&k), 0xffff_ffff_8100_1010);
        let b = kernel_frame(Some(&k), 0xffff_ffff_8100_1f00);
        assert_eq!(a, b, "two IPs of one function are one frame");
        assert_eq!(a.function.as_deref(), Some("do_syscall_64"));
        assert_eq!(a.rel_pc, 0);
        assert_eq!(a.mapping, MappingDesc::kernel());
        assert_eq!(
            (a.mapping.start, a.mapping.end, a.mapping.load_bias),
            (0, 0, 0)
        );
    }

    #[test]
    fn an_unknown_address_is_the_unnamed_kernel_frame() {
        let k = KernelSymbols::parse(KALLSYMS).expect("parse");
        let hidden = KernelSymbols::parse("0000000000000000 T _text\n").expect("parse");
        // Below every symbol, past the end of text, more than the bound
        // past its symbol, no table, addresses hidden.
        let far = 0xffff_ffff_8100_2000 + MAX_SYMBOL_SIZE + 1;
        for (symbols, ip) in [
            (Some(&k), 0x1000),
            (Some(&k), 0xffff_ffff_8140_0010),
            (Some(&k), far),
            (None, 0xffff_ffff_8100_1010),
            (Some(&hidden), 0xffff_ffff_8100_1010),
        ] {
            let f = kernel_frame(symbols, ip);
            assert_eq!(f.function, None, "{ip:#x}");
            assert_eq!(f.rel_pc, 0);
            assert_eq!(f.mapping, MappingDesc::kernel());
        }
        assert_eq!(
            kernel_function(Some(&k), far - 2),
            Some("ksys_read"),
            "within the bound"
        );
    }
}
