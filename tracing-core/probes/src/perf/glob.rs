//! Shell-style glob matching of command lines, as upstream's profilers
//! match `target_cmdline`/`exclude_cmdline` (POSIX `fnmatch` with
//! `FNM_NOESCAPE` and no other flag): `*` is any run of bytes (`/` and a
//! leading `.` included), `?` any one byte, `[...]` a bracket expression
//! (`!` or `^` negates it, `a-z` ranges, `[:alpha:]` classes, a `]` first
//! in it is literal, an unterminated `[` is a literal `[`), and a backslash
//! is an ordinary byte. Bytes, not characters, as in the C locale.

/// Whether `pattern` matches all of `subject`.
pub fn glob_match(pattern: &[u8], subject: &[u8]) -> bool {
    let (mut p, mut s) = (0usize, 0usize);
    // Where to resume after the last `*`: (pattern after it, subject pos).
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    // Runs of stars are one star.
                    while pattern.get(p) == Some(&b'*') {
                        p += 1;
                    }
                    star = Some((p, s));
                    continue;
                }
                b'?' if s < subject.len() => {
                    p += 1;
                    s += 1;
                    continue;
                }
                b'[' if s < subject.len() => match bracket(&pattern[p..], subject[s]) {
                    Bracket::Match(len) => {
                        p += len;
                        s += 1;
                        continue;
                    }
                    Bracket::NoMatch => {}
                    // Not a bracket expression: a literal `[`.
                    Bracket::Literal if subject[s] == b'[' => {
                        p += 1;
                        s += 1;
                        continue;
                    }
                    Bracket::Literal => {}
                    // A malformed class: fnmatch fails the whole pattern.
                    Bracket::Invalid => return false,
                },
                c if s < subject.len() && c != b'?' && c != b'[' && c == subject[s] => {
                    p += 1;
                    s += 1;
                    continue;
                }
                _ => {}
            }
        } else if s == subject.len() {
            return true;
        }
        // Mismatch: let the last star take one more byte, if it can.
        match star {
            Some((sp, ss)) if ss < subject.len() => {
                star = Some((sp, ss + 1));
                p = sp;
                s = ss + 1;
            }
            _ => return false,
        }
    }
}

/// What a `[` at the start of a pattern does to one byte.
enum Bracket {
    /// It is a bracket expression of `len` pattern bytes that matches.
    Match(usize),
    /// It is a bracket expression that does not match.
    NoMatch,
    /// It is not terminated: the `[` is an ordinary byte.
    Literal,
    /// It names a character class that does not exist.
    Invalid,
}

/// Reads the bracket expression at the start of `pattern` (which begins
/// with `[`) against byte `c`.
fn bracket(pattern: &[u8], c: u8) -> Bracket {
    let mut i = 1;
    let negate = matches!(pattern.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let Some(&b) = pattern.get(i) else {
            return Bracket::Literal;
        };
        if b == b']' && !first {
            i += 1;
            break;
        }
        first = false;
        if b == b'[' && pattern.get(i + 1) == Some(&b':') {
            let rest = &pattern[i + 2..];
            if let Some(end) = rest.windows(2).position(|w| w == b":]") {
                match class(&rest[..end]) {
                    Some(f) => matched |= f(c),
                    None => return Bracket::Invalid,
                }
                i += 2 + end + 2;
                continue;
            }
        }
        // A range `b-e`, unless the `-` is the last byte before `]`.
        if pattern.get(i + 1) == Some(&b'-') {
            if let Some(&e) = pattern.get(i + 2) {
                if e != b']' {
                    matched |= (b..=e).contains(&c);
                    i += 3;
                    continue;
                }
            }
        }
        matched |= b == c;
        i += 1;
    }
    if matched != negate {
        Bracket::Match(i)
    } else {
        Bracket::NoMatch
    }
}

/// The test of a `[:name:]` character class (the C locale's).
fn class(name: &[u8]) -> Option<fn(u8) -> bool> {
    Some(match name {
        b"alnum" => |c: u8| c.is_ascii_alphanumeric(),
        b"alpha" => |c: u8| c.is_ascii_alphabetic(),
        b"blank" => |c: u8| c == b' ' || c == b'\t',
        b"cntrl" => |c: u8| c.is_ascii_control(),
        b"digit" => |c: u8| c.is_ascii_digit(),
        b"graph" => |c: u8| c.is_ascii_graphic(),
        b"lower" => |c: u8| c.is_ascii_lowercase(),
        b"print" => |c: u8| c.is_ascii_graphic() || c == b' ',
        b"punct" => |c: u8| c.is_ascii_punctuation(),
        b"space" => |c: u8| c.is_ascii_whitespace() || c == 0x0b,
        b"upper" => |c: u8| c.is_ascii_uppercase(),
        b"xdigit" => |c: u8| c.is_ascii_hexdigit(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    fn m(p: &str, s: &str) -> bool {
        glob_match(p.as_bytes(), s.as_bytes())
    }

    #[test]
    fn stars_and_question_marks_as_fnmatch() {
        assert!(m("surfaceflinger", "surfaceflinger"));
        assert!(m("???faceflinger", "surfaceflinger"));
        assert!(!m("???faceflinger", "urfaceflinger"));
        assert!(m("*flinger", "surfaceflinger"));
        assert!(m("s*f*r", "surfaceflinger"));
        assert!(m("*", ""));
        assert!(!m("?", ""));
        // No FNM_PATHNAME: a star crosses `/`; no FNM_PERIOD: it takes a
        // leading dot.
        assert!(m("/system/*", "/system/bin/adb"));
        assert!(m("*adb", ".adb"));
        assert!(m("a**b", "ab"));
        assert!(!m("a*b", "a/c"));
    }

    #[test]
    fn brackets_as_fnmatch() {
        assert!(m("[sS]urface*", "Surfaceflinger"));
        assert!(!m("[!sS]urface*", "Surfaceflinger"));
        assert!(m("[^a]x", "bx"));
        assert!(m("app[0-9]", "app7"));
        assert!(!m("app[0-9]", "appx"));
        assert!(m("[]]", "]"));
        assert!(m("[!]]", "a"));
        assert!(m("[a-]", "-"));
        assert!(m("x[[:digit:]]", "x4"));
        assert!(!m("x[[:digit:]]", "xa"));
        assert!(
            !m("x[[:nope:]]", "x4"),
            "an unknown class fails the pattern"
        );
        // Unterminated: a literal `[`.
        assert!(m("a[b", "a[b"));
        assert!(!m("a[b", "ab"));
        // FNM_NOESCAPE: a backslash is an ordinary byte.
        assert!(m("a\\*", "a\\bc"));
        assert!(!m("a\\*", "a*"));
    }
}
