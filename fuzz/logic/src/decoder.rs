//! The schema-less decoder on arbitrary bytes: every field, and every
//! length-delimited field again as a nested message (bounded depth), must
//! decode or fail with an error, and every payload must lie inside the input.

use protozero::Decoder;

fn walk(buf: &[u8], whole: std::ops::Range<usize>, depth: u32) {
    for field in Decoder::new(buf) {
        let Ok(field) = field else { break };
        if let Ok(bytes) = field.as_bytes() {
            let start = bytes.as_ptr() as usize;
            assert!(start >= whole.start && start + bytes.len() <= whole.end);
            if depth < 8 {
                walk(bytes, whole.clone(), depth + 1);
            }
        }
    }
}

/// The `decoder` target.
pub fn decoder(data: &[u8]) {
    let start = data.as_ptr() as usize;
    walk(data, start..start + data.len(), 0);
}
