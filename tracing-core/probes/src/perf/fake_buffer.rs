//! A [`PerfBuffer`] for tests: records handed to it are what the "kernel"
//! wrote; its watch descriptor polls readable whenever records wait (as a
//! buffer past its watermark does), and it counts the reads.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::buffer::PerfBuffer;
use super::ring::RingError;

/// The test's handle on a [`FakeBuffer`]: writes records, counts reads.
#[derive(Debug, Clone)]
pub struct FakeKernel {
    pending: Arc<Mutex<Vec<u8>>>,
    reads: Arc<AtomicU64>,
    bell: Arc<UnixStream>,
}

impl FakeKernel {
    /// The "kernel" writes `bytes` (whole records) into the buffer.
    pub fn write(&self, bytes: &[u8]) {
        self.pending
            .lock()
            .expect("pending")
            .extend_from_slice(bytes);
        // The watch descriptor turns readable; a byte already there is enough.
        let _ = (&*self.bell).write(&[1]);
    }

    /// How many times the buffer was read.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }

    /// Bytes written and not read yet.
    pub fn pending(&self) -> usize {
        self.pending.lock().expect("pending").len()
    }
}

/// The buffer itself, handed to the drain or the data source.
#[derive(Debug)]
pub struct FakeBuffer {
    cpu: u32,
    kernel: FakeKernel,
    watch: UnixStream,
}

/// A fake buffer of `cpu` and the test's handle on it.
pub fn fake_buffer(cpu: u32) -> (FakeBuffer, FakeKernel) {
    let (bell, watch) = UnixStream::pair().expect("socketpair");
    watch.set_nonblocking(true).expect("nonblocking");
    let kernel = FakeKernel {
        pending: Arc::default(),
        reads: Arc::default(),
        bell: Arc::new(bell),
    };
    (
        FakeBuffer {
            cpu,
            kernel: kernel.clone(),
            watch,
        },
        kernel,
    )
}

impl PerfBuffer for FakeBuffer {
    fn cpu(&self) -> u32 {
        self.cpu
    }

    fn watch_fd(&self) -> std::io::Result<OwnedFd> {
        Ok(OwnedFd::from(self.watch.try_clone()?))
    }

    fn enable(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn disable(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn read(&mut self, out: &mut Vec<u8>, _stack_size: Option<u64>) -> Result<usize, RingError> {
        self.kernel.reads.fetch_add(1, Ordering::SeqCst);
        let mut pending = self.kernel.pending.lock().expect("pending");
        out.extend_from_slice(&pending);
        let n = pending.len();
        pending.clear();
        if n > 0 {
            // Read to the head: the watermark is no longer passed.
            let mut sink = [0u8; 64];
            while matches!((&self.watch).read(&mut sink), Ok(k) if k > 0) {}
        }
        Ok(n)
    }
}
