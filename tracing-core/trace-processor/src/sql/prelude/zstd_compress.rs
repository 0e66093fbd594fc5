//! `__intrinsic_zstd_compress(x)`: the prelude's function that compresses
//! a string's or a blob's bytes into a zstd frame (a blob), so that large
//! text (exported JSON and the like) can be stored compactly. NULL gives
//! NULL; a number is an error, as upstream refuses it. The compressor is
//! `ruzstd`'s (pure Rust); any zstd decoder reads its frames.

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use ruzstd::encoding::{CompressionLevel, compress_to_vec};

/// Why a value could not be compressed.
#[derive(Debug, thiserror::Error)]
pub enum ZstdError {
    /// An integer or a double was given.
    #[error("ZSTD: argument must be a string or blob")]
    NotBytes,
}

/// The frame of `x`'s bytes, NULL for NULL.
fn zstd_compress(ctx: &Context<'_>) -> rusqlite::Result<Value> {
    let bytes = match ctx.get_raw(0) {
        ValueRef::Null => return Ok(Value::Null),
        ValueRef::Integer(_) | ValueRef::Real(_) => {
            return Err(rusqlite::Error::UserFunctionError(Box::new(
                ZstdError::NotBytes,
            )));
        }
        ValueRef::Text(b) | ValueRef::Blob(b) => b,
    };
    Ok(Value::Blob(compress_to_vec(
        bytes,
        CompressionLevel::Fastest,
    )))
}

/// Registers `__intrinsic_zstd_compress` on `conn`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "__intrinsic_zstd_compress",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        zstd_compress,
    )
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::{TraceProcessor, Value};

    #[test]
    fn text_and_blobs_become_zstd_frames_that_decode_back() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        let r = tp
            .query(
                "SELECT __intrinsic_zstd_compress('hello, hello, hello'), \
                        __intrinsic_zstd_compress(x'000102'), \
                        __intrinsic_zstd_compress(NULL)",
            )
            .expect("query");
        let row = &r.rows[0];
        for (cell, plain) in [
            (&row[0], &b"hello, hello, hello"[..]),
            (&row[1], &[0, 1, 2][..]),
        ] {
            let Value::Blob(frame) = cell else {
                panic!("not a blob: {cell:?}");
            };
            assert_eq!(frame[..4], [0x28, 0xB5, 0x2F, 0xFD]);
            let mut out = Vec::new();
            let mut dec = ruzstd::decoding::StreamingDecoder::new(&frame[..]).expect("frame");
            std::io::Read::read_to_end(&mut dec, &mut out).expect("decode");
            assert_eq!(out, plain);
        }
        assert_eq!(row[2], Value::Null);
        let e = tp
            .query("SELECT __intrinsic_zstd_compress(1)")
            .expect_err("a number");
        assert!(e.to_string().contains("string or blob"), "{e}");
    }
}
