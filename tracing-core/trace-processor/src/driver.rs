//! The thin I/O driver: reads a trace file or any reader, plain or
//! gzip-compressed (told by the gzip magic), in chunks into the loading
//! core.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, TraceError};
use crate::load::Loader;
use crate::storage::Storage;

/// Bytes read per chunk.
const CHUNK: usize = 1 << 20;

/// Loads a trace from a reader (plain or gzip).
pub fn load_reader(mut r: impl Read) -> Result<Storage, Error> {
    let mut loader = Loader::new();
    let mut head = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        let n = r.read(&mut head[got..])?;
        if n == 0 {
            break;
        }
        got += n;
    }
    let head = &head[..got];
    if head == [0x1f, 0x8b] {
        let chained = std::io::Cursor::new(head.to_vec()).chain(r);
        let gz = flate2::read::MultiGzDecoder::new(chained);
        pump(&mut loader, gz, true)?;
    } else {
        loader.push(head)?;
        pump(&mut loader, r, false)?;
    }
    Ok(loader.finish()?)
}

fn pump(loader: &mut Loader, mut r: impl Read, gzip: bool) -> Result<(), Error> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match r.read(&mut buf) {
            Ok(n) => n,
            Err(e) if gzip => return Err(TraceError::Gzip(e.to_string()).into()),
            Err(e) => return Err(e.into()),
        };
        if n == 0 {
            return Ok(());
        }
        loader.push(&buf[..n])?;
    }
}

/// Loads a trace file (plain or gzip).
pub fn load_file(path: &Path) -> Result<Storage, Error> {
    let f = std::fs::File::open(path)?;
    load_reader(std::io::BufReader::new(f))
}
