//! Which web pages may open the bridge: the origins Perfetto's
//! `websocket_bridge` lets in, plus the user's, compared as Perfetto's
//! HTTP server compares them (ASCII case-insensitively, whole string).

/// The origins Perfetto's bridge lets in: the UI and a local UI build.
pub const ALLOWED_ORIGINS: &[&str] = &[
    "https://ui.perfetto.dev",
    "http://localhost:10000",
    "http://127.0.0.1:10000",
];

/// Whether a request with `Origin` header `origin` may open the WebSocket:
/// one of [`ALLOWED_ORIGINS`] or of `extra`, the whole string, ignoring
/// ASCII case. No origin (a non-browser client that does not say) is
/// refused too, as is the opaque `null` of a `file://` page.
///
/// An origin only keeps other web pages out: any local program can send
/// any header, so it decides nothing about who the peer is (see
/// `peer.rs`).
pub fn origin_allowed(origin: Option<&str>, extra: &[String]) -> bool {
    origin.is_some_and(|o| {
        ALLOWED_ORIGINS
            .iter()
            .copied()
            .chain(extra.iter().map(String::as_str))
            .any(|a| a.eq_ignore_ascii_case(o))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bridges_origins_and_the_extra_ones_are_let_in() {
        let extra = vec!["http://localhost:4242".to_owned()];
        for ok in ALLOWED_ORIGINS {
            assert!(origin_allowed(Some(ok), &[]), "{ok}");
        }
        assert!(origin_allowed(Some("http://localhost:4242"), &extra));
        for bad in [
            None,
            Some("null"),
            Some(""),
            Some("https://ui.perfetto.dev.evil.example"),
            Some("https://evil.example"),
            Some("http://ui.perfetto.dev"),
            Some("http://localhost:10001"),
            Some("http://localhost:4242/"),
        ] {
            assert!(!origin_allowed(bad, &extra), "{bad:?}");
        }
    }

    #[test]
    fn origins_match_whatever_their_case() {
        let extra = vec!["http://MyHost:4242".to_owned()];
        assert!(origin_allowed(Some("HTTPS://UI.Perfetto.dev"), &[]));
        assert!(origin_allowed(Some("http://myhost:4242"), &extra));
        assert!(!origin_allowed(Some("https://ui.perfetto.dev "), &[]));
    }
}
