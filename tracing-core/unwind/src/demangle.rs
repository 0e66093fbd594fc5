//! Symbol names as a person reads them: Rust's legacy (`_ZN...17h<hash>E`)
//! and v0 (`_R...`) manglings through `rustc-demangle` (without the hash),
//! C++ Itanium (`_Z...`) through `cpp_demangle`, anything else unchanged.
//! Rust is tried first: a legacy Rust name is also a valid Itanium name,
//! and only Rust's demangler drops the hash.

/// `raw` demangled, or `raw` itself when it is not a mangled name (or does
/// not demangle).
pub fn demangle(raw: &str) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(raw) {
        return format!("{d:#}");
    }
    if raw.starts_with("_Z") {
        if let Ok(sym) = cpp_demangle::Symbol::new(raw.as_bytes()) {
            if let Ok(s) = sym.demangle() {
                return s;
            }
        }
    }
    raw.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn each_mangling() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
        assert_eq!(demangle("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
        assert_eq!(demangle("_ZN3foo3barEv"), "foo::bar()");
        assert_eq!(
            demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back(int const&)"
        );
        assert_eq!(demangle("main"), "main");
        assert_eq!(demangle("_Zgarbage"), "_Zgarbage");
    }

    proptest! {
        #[test]
        fn never_panics(s in "_[RZ][ -~]{0,60}") {
            let _ = demangle(&s);
        }
    }
}
