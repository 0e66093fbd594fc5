//! Every listener of the project admits its peers through the peer-policy
//! module (`tracing-core/src/peer_policy/`): the rule "no endpoint gives a
//! peer more than its kernel-vouched uid would get" held everywhere it was
//! written down, and then an endpoint was built without it. So the
//! workspace's sources are read here, and any accept of a connection
//! outside that module fails the test: the raw accept calls, and the
//! binds that make a listening socket, each allowed elsewhere only where
//! the list below says why. Test code (`tests/` directories and
//! `#[cfg(test)]` modules) and comments are left out.

use std::path::{Path, PathBuf};

/// The module every listener goes through; anything goes inside it.
const POLICY_MODULE: &str = "tracing-core/src/peer_policy/";

/// Calls that take a peer from a listening socket: outside the policy
/// module, none at all.
const ACCEPTS: &[&str] = &[".accept(", ".incoming()", "accept_with(", "accept4("];

/// Calls that make a listening socket.
const BINDS: &[&str] = &[
    "TcpListener::bind",
    "UnixListener::bind",
    "net::listen(",
    "VsockListener",
];

/// Bind sites outside the policy module, and why each is no listener that
/// bypasses it. An entry that no longer matches fails too, so the list
/// stays the truth.
const ALLOWED_BINDS: &[(&str, &str, &str)] = &[
    (
        "tracing-core/src/ipc/socket.rs",
        "TcpListener::bind",
        "the service transports' bind (ipc::listen); the Listener it returns has no \
         accept: only peer_policy's ServiceGate takes peers from it",
    ),
    (
        "tracing-core/src/ipc/socket.rs",
        "UnixListener::bind",
        "the same, for unix socket files and abstract names",
    ),
    (
        "tracing-core/src/ipc/vsock.rs",
        "net::listen(",
        "the same, for vsock",
    ),
    (
        "xtask/src/tp_python/mod.rs",
        "TcpListener::bind",
        "asks the system for a free port and closes it; accepts nothing",
    ),
    (
        "tracing-core/interop/src/services.rs",
        "TcpListener::bind",
        "asks the system for a free port and closes it; accepts nothing",
    ),
];

/// The listeners there are, and the gate each must open with: the scan
/// above finds a bypass, this finds a listener that stopped naming its
/// policy.
const LISTENERS: &[(&str, &str)] = &[
    ("tracing-core/src/daemon/mod.rs", "ServiceGate::listen("),
    ("tracing-core/cli/src/relay.rs", "ServiceGate::listen("),
    ("tracing-core/cli/src/websocket/mod.rs", "TcpGate::bind("),
    ("tracing-core/cli/src/tp_httpd/mod.rs", "TcpGate::bind("),
];

/// Every `.rs` file of the repository outside build output, version
/// control and `tests/` directories, as `/`-joined relative paths.
fn sources(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if matches!(
                name.as_str(),
                "target" | ".git" | "tests" | "corpus" | "artifacts"
            ) {
                continue;
            }
            let path = rel.join(&name);
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            } else if name.ends_with(".rs") {
                out.push(path.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// The lines of `text` that are code outside test modules: a
/// `#[cfg(test)]` item that is a `mod` is left out up to its closing
/// brace, and so are lines that are comments.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "#[cfg(test)]" {
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim().starts_with("#[") {
                j += 1;
            }
            let is_mod = lines.get(j).is_some_and(|l| {
                let l = l.trim_start();
                let l = l.strip_prefix("pub ").unwrap_or(l);
                l.starts_with("mod ") && l.trim_end().ends_with('{')
            });
            if is_mod {
                let mut depth = 0i64;
                let mut k = j;
                while k < lines.len() {
                    depth += lines[k].matches('{').count() as i64;
                    depth -= lines[k].matches('}').count() as i64;
                    if depth <= 0 {
                        break;
                    }
                    k += 1;
                }
                i = k + 1;
                continue;
            }
        }
        if !lines[i].trim_start().starts_with("//") {
            out.push((i + 1, lines[i]));
        }
        i += 1;
    }
    out
}

/// Every accept or bind outside the policy module that the allow-list
/// does not explain, as `path:line: text`; and the allow-list entries
/// that matched nothing.
fn bypasses(root: &Path) -> (Vec<String>, Vec<&'static str>) {
    let mut found = Vec::new();
    let mut used = vec![false; ALLOWED_BINDS.len()];
    for path in sources(root) {
        if path.starts_with(POLICY_MODULE) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&path)) else {
            continue;
        };
        for (n, line) in code_lines(&text) {
            for pat in ACCEPTS {
                if line.contains(pat) {
                    found.push(format!("{path}:{n}: {} (accepts: {pat})", line.trim()));
                }
            }
            for pat in BINDS {
                if !line.contains(pat) {
                    continue;
                }
                match ALLOWED_BINDS
                    .iter()
                    .position(|(p, what, _)| *p == path && what == pat)
                {
                    Some(i) => used[i] = true,
                    None => found.push(format!("{path}:{n}: {} (binds: {pat})", line.trim())),
                }
            }
        }
    }
    let stale = ALLOWED_BINDS
        .iter()
        .zip(used)
        .filter(|(_, u)| !u)
        .map(|((p, _, _), _)| *p)
        .collect();
    (found, stale)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_listener_admits_through_the_peer_policy() {
    let root = root();
    let (found, stale) = bypasses(&root);
    assert!(
        found.is_empty(),
        "listeners that do not admit through {POLICY_MODULE} (accept through a ServiceGate \
         or TcpGate with the endpoint's Policy):\n{}",
        found.join("\n")
    );
    assert!(
        stale.is_empty(),
        "allow-list entries matching nothing: {stale:?}"
    );
    for (path, gate) in LISTENERS {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        assert!(
            code_lines(&text).iter().any(|(_, l)| l.contains(gate)),
            "{path} no longer listens through {gate}"
        );
    }
}

#[test]
fn the_scan_finds_a_bypass_and_skips_tests_and_comments() {
    let bypass = "fn serve(l: std::net::TcpListener) {\n    for c in l.incoming() {}\n}\n\
                  // l.accept() in a comment\n\
                  #[cfg(test)]\nmod tests {\n    fn t() {\n        let l = TcpListener::bind(\"x\");\n        l.accept();\n    }\n}\n\
                  fn after() { let _ = x.accept(); }\n";
    let lines: Vec<usize> = code_lines(bypass)
        .into_iter()
        .filter(|(_, l)| ACCEPTS.iter().chain(BINDS).any(|p| l.contains(p)))
        .map(|(n, _)| n)
        .collect();
    // The loop's `incoming()` and the accept after the test module; not the
    // comment, not the test module's bind and accept.
    assert_eq!(lines, [2, 12], "{bypass}");
}
