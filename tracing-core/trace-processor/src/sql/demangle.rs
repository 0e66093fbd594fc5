//! `demangle(name)`: an Itanium C++ (`_Z...`) or Rust v0 (`_R...`) symbol
//! name demangled, NULL when the name is not mangled or cannot be read.

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{Value, ValueRef};

/// The demangled name, if `name` is a mangled one: Itanium C++ (`_Z`,
/// Rust's legacy names among them) or Rust v0 (`_R`), as LLVM's demangler
/// reads them.
pub fn demangle(name: &str) -> Option<String> {
    if name.starts_with("_R") {
        return rustc_demangle::try_demangle(name)
            .ok()
            .map(|d| format!("{d}"));
    }
    if !name.starts_with("_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(name.as_bytes()).ok()?;
    sym.demangle().ok()
}

/// Registers `demangle`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "demangle",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(t) => match demangle(&String::from_utf8_lossy(t)) {
                    Some(s) => Value::Text(s),
                    None => Value::Null,
                },
                _ => Value::Null,
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn cpp_names_are_demangled_and_plain_names_are_not() {
        assert_eq!(
            demangle("_ZN3art9ArtMethod6InvokeEPNS_6ThreadEPjjPNS_6JValueEPKc").as_deref(),
            Some(
                "art::ArtMethod::Invoke(art::Thread*, unsigned int*, unsigned int, art::JValue*, char const*)"
            )
        );
        assert_eq!(demangle("ExecuteSwitchImplAsm"), None);
        assert_eq!(demangle("com.example.Foo.bar"), None);
    }
}
