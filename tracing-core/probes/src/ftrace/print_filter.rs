//! `FtraceConfig.print_filter`: which `ftrace/print` events (what programs
//! write to `trace_marker`, atrace's messages among them) a session keeps.
//! Rules are tried in order on the event's `buf`; the first that matches
//! decides (`allow`), and an event no rule matches is kept. A rule matches
//! a prefix of the text, or an atrace message `TYPE|PID|PREFIX...`. The
//! rule is upstream's; the filtering happens as the records are
//! translated, as upstream's probes do it, so the kernel's buffer still
//! holds every message.

use zerotrace_protos::protos::ftrace_config::PrintFilterDecoder;

/// One rule: what it matches, and whether a match keeps the event.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    matches: Match,
    allow: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Match {
    /// The text starts with these bytes.
    Prefix(Vec<u8>),
    /// The text is `TYPE|DIGITS|` followed by `prefix`.
    Atrace { kind: Vec<u8>, prefix: Vec<u8> },
}

/// The rules of a `PrintFilter`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrintFilter {
    rules: Vec<Rule>,
}

impl PrintFilter {
    /// Reads a `FtraceConfig.PrintFilter`; `None` where it does not decode.
    pub fn from_config(bytes: &[u8]) -> Option<PrintFilter> {
        let d = PrintFilterDecoder::new(bytes);
        let mut rules = Vec::new();
        let mut it = d.rules();
        for r in it.by_ref() {
            let matches = match r.atrace_msg() {
                Some(a) => Match::Atrace {
                    kind: a.r#type().unwrap_or("").as_bytes().to_vec(),
                    prefix: a.prefix().unwrap_or("").as_bytes().to_vec(),
                },
                None => Match::Prefix(r.prefix().unwrap_or("").as_bytes().to_vec()),
            };
            rules.push(Rule {
                matches,
                allow: r.allow().unwrap_or(false),
            });
        }
        if it.error().is_some() || d.decode_error().is_some() {
            return None;
        }
        Some(PrintFilter { rules })
    }

    /// Whether an event whose `buf` is `text` is kept.
    pub fn allows(&self, text: &[u8]) -> bool {
        self.rules
            .iter()
            .find(|r| r.matches.matches(text))
            .is_none_or(|r| r.allow)
    }
}

impl Match {
    fn matches(&self, text: &[u8]) -> bool {
        match self {
            Match::Prefix(p) => text.starts_with(p),
            Match::Atrace { kind, prefix } => {
                let Some(rest) = text.strip_prefix(kind.as_slice()) else {
                    return false;
                };
                let Some(rest) = rest.strip_prefix(b"|") else {
                    return false;
                };
                // The pid: digits, then `|` (none at all matches too, as
                // upstream's loop allows).
                let Some(bar) = rest.iter().position(|&b| b == b'|') else {
                    return false;
                };
                if !rest[..bar].iter().all(u8::is_ascii_digit) {
                    return false;
                }
                rest[bar + 1..].starts_with(prefix)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use protozero::HeapWriter;

    use super::*;
    use zerotrace_protos::protos::FtraceConfig;
    use zerotrace_protos::protos::ftrace_config::print_filter::Rule as RuleMsg;

    fn filter(
        f: impl FnOnce(&mut zerotrace_protos::protos::ftrace_config::PrintFilter<'_>),
    ) -> PrintFilter {
        let mut w = HeapWriter::new();
        {
            let mut c = FtraceConfig::from_message(w.root());
            let mut p = c.begin_print_filter();
            f(&mut p);
        }
        let bytes = w.finish().unwrap();
        let cfg = zerotrace_protos::protos::FtraceConfigDecoder::new(&bytes);
        PrintFilter::from_config(cfg.print_filter_bytes().unwrap()).unwrap()
    }

    #[test]
    fn first_matching_rule_decides_and_no_match_keeps() {
        let f = filter(|p| {
            p.add_rules().set_prefix("noisy").set_allow(false);
            {
                let mut r: RuleMsg<'_> = p.add_rules();
                r.begin_atrace_msg().set_type("B").set_prefix("gfx:");
                r.set_allow(true);
            }
            p.add_rules().set_prefix("B|").set_allow(false);
        });
        assert!(!f.allows(b"noisy thing\n"));
        assert!(f.allows(b"quiet thing\n"), "no rule: kept");
        assert!(f.allows(b"B|1234|gfx:draw\n"), "atrace rule first");
        assert!(!f.allows(b"B|1234|other\n"), "then the prefix rule");
        assert!(!f.allows(b"B|12a4|gfx:draw\n"), "a pid of digits only");
        assert!(f.allows(b"E|1234|gfx:draw\n"));
        assert!(f.allows(b""));
        // Upstream's loop lets an empty pid through.
        assert!(f.allows(b"B||gfx:x"));
    }
}
