//! What the tests of `fixtures_cycles` share: bytes written with a generated
//! writer, Google's `protoc` (vendored) as the oracle that reads them
//! (`--decode`) and writes its own (`--encode`), and a generic walk that
//! follows every nested message through `FieldEnum::visit_message`, the
//! path issue 47 broke.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use protozero::{FieldEnum, HeapWriter, Lazy, MessageFields, MessageVisitor};

/// Bytes written by `f` into a fresh root message.
pub fn encode(f: impl FnOnce(&mut HeapWriter)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(&mut w);
    w.finish().unwrap()
}

fn protoc(args: &[&str], input: &[u8], file: &str) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures_cycles");
    let mut child = Command::new(protoc_bin_vendored::protoc_bin_path().unwrap())
        .arg(format!("-I{}", root.display()))
        .args(args)
        .arg(file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "protoc {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `protoc --decode=message` of `bytes`: the text protoc reads from them.
pub fn decode_text(message: &str, file: &str, bytes: &[u8]) -> String {
    String::from_utf8(protoc(&[&format!("--decode={message}")], bytes, file)).unwrap()
}

/// `protoc --encode=message` of `text`: protoc's bytes for it.
pub fn encode_text(message: &str, file: &str, text: &str) -> Vec<u8> {
    protoc(&[&format!("--encode={message}")], text.as_bytes(), file)
}

/// The walk stops descending here (the fixtures nest far less).
const MAX_DEPTH: usize = 64;

/// Every message a walk met, by full name and depth, in wire order.
#[derive(Default)]
struct Walk {
    /// `(full name, depth)` of each message met, the root at depth 0.
    seen: Vec<(&'static str, usize)>,
    depth: usize,
}

impl<'a> MessageVisitor<'a> for Walk {
    fn message<D: MessageFields<'a>>(&mut self, message: Lazy<'a, D>) {
        self.seen.push((D::FULL_NAME, self.depth));
        if self.depth == MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let mut fields = message.fields();
        for f in fields.by_ref() {
            f.visit_message(self);
        }
        assert_eq!(fields.error(), None, "{} is malformed", D::FULL_NAME);
        self.depth -= 1;
    }
}

/// The messages met walking `bytes` as a `D` (the root included), the
/// fixtures' package prefix (`fixture.`) left out.
pub fn walk<'a, D: MessageFields<'a>>(bytes: &'a [u8]) -> Vec<(&'static str, usize)> {
    let mut walk = Walk::default();
    walk.message(Lazy::<D>::new(bytes));
    walk.seen
        .into_iter()
        .map(|(name, depth)| (name.strip_prefix("fixture.").unwrap_or(name), depth))
        .collect()
}
