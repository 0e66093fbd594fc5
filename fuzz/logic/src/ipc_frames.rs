//! The IPC frame deserializer fed an arbitrary byte stream, split at
//! arbitrary points: it never panics, gives the same frames however the
//! stream is split, and every frame it gives re-encodes to bytes that decode
//! to the same frame.

use zerotrace_core::ipc::{Frame, FrameDecoder};

fn frames(pieces: &[&[u8]]) -> (Vec<Frame>, bool) {
    let mut d = FrameDecoder::new();
    let mut out = Vec::new();
    for p in pieces {
        d.push(p);
        while let Some(f) = d.next_frame() {
            match f {
                Ok(f) => out.push(f),
                Err(e) => {
                    assert!(e.is_fatal());
                    return (out, true);
                }
            }
        }
    }
    (out, false)
}

/// The `ipc_frames` target.
pub fn ipc_frames(data: &[u8]) {
    let Some((&split, stream)) = data.split_first() else {
        return;
    };
    let whole = frames(&[stream]);
    let step = usize::from(split).max(1);
    let pieces: Vec<&[u8]> = stream.chunks(step).collect();
    assert_eq!(frames(&pieces), whole, "the split changed the frames");
    for f in &whole.0 {
        let bytes = f.encode();
        assert_eq!(
            Frame::decode(&bytes[4..]).as_ref(),
            Ok(f),
            "decode(encode(x)) == x"
        );
    }
}
