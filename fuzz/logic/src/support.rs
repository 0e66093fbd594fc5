//! Support shared by the targets: a deterministic service environment (fake
//! clock, heap SMBs the input can rewrite), a byte-stream cursor, and
//! scratch files for the targets whose code under test reads paths.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use zerotrace_core::service::{ClockReading, ProducerId, ServiceEnv};
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};

/// What the fake environment shares with the target.
#[derive(Default)]
pub struct World {
    /// The fake BOOTTIME.
    pub now: u64,
    /// SMBs handed out, by producer.
    pub smbs: HashMap<ProducerId, Arc<HeapShm>>,
}

/// A [`ServiceEnv`] with no clock, randomness or memfds.
pub struct FakeEnv(pub Rc<RefCell<World>>);

impl ServiceEnv for FakeEnv {
    fn clock_snapshot(&mut self) -> Vec<ClockReading> {
        let now = self.0.borrow().now;
        vec![ClockReading {
            clock_id: 6,
            timestamp: now,
        }]
    }

    fn new_uuid(&mut self) -> u128 {
        7
    }

    fn system_info(&mut self) -> Vec<u8> {
        Vec::new()
    }

    fn allocate_smb(
        &mut self,
        producer: ProducerId,
        size: usize,
        _page_size: usize,
    ) -> Result<Arc<dyn SharedMemoryRegion>, String> {
        // Keep fuzzing memory small.
        let region = Arc::new(HeapShm::new(size.min(64 * 1024)).map_err(|e| e.to_string())?);
        self.0.borrow_mut().smbs.insert(producer, region.clone());
        Ok(region)
    }
}

/// Reads the fuzz input a piece at a time.
pub struct Cursor<'a>(pub &'a [u8]);

impl<'a> Cursor<'a> {
    /// The next byte.
    pub fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    /// The next `n` bytes (fewer at the end).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }

    /// A length-prefixed piece (one length byte).
    pub fn piece(&mut self) -> &'a [u8] {
        let n = self.byte().unwrap_or(0) as usize;
        self.bytes(n)
    }
}

/// Writes `bytes` into `region` at `offset` (wrapping), as a hostile
/// producer rewriting its shared memory would.
pub fn scribble(region: &HeapShm, offset: usize, bytes: &[u8]) {
    let size = region.size();
    if size == 0 {
        return;
    }
    for (i, &b) in bytes.iter().enumerate() {
        let at = (offset + i) % size;
        // SAFETY: `at` is inside the region, which the target owns; the
        // service core reads it only through atomic copies and header atomics,
        // and this thread is the only writer.
        unsafe { region.as_ptr().add(at).write_volatile(b) };
    }
}

/// A fresh directory of its own under the system's temporary directory,
/// removed (with what it holds) when dropped. Targets whose code under test
/// only reads files (the codegen front end, the `zerotrace` trace readers)
/// write each input into one.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates the directory; `what` becomes part of its name.
    pub fn new(what: &str) -> std::io::Result<ScratchDir> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("zerotrace-fuzz-{what}-{}-{n}", std::process::id()));
        // A leftover of a killed run with the same pid and number.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        Ok(ScratchDir(dir))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `f` with the process's standard output sent to `/dev/null` (for
/// code under test that prints whole reports, such as `zerotrace dump`:
/// printing them would only slow the fuzzer down and flood test logs).
/// Standard output is restored afterwards, even if `f` panics. Calls are
/// serialised; if stdout cannot be redirected, `f` runs with it as it is.
pub fn with_stdout_silenced<R>(f: impl FnOnce() -> R) -> R {
    use std::io::Write;
    use std::sync::Mutex;

    static LOCK: Mutex<()> = Mutex::new(());
    let _serial = LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());

    /// Puts the saved stdout back when dropped.
    struct Restore(Option<std::os::fd::OwnedFd>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::io::stdout().flush();
            if let Some(saved) = self.0.take() {
                let _ = rustix::stdio::dup2_stdout(&saved);
            }
        }
    }

    let _ = std::io::stdout().flush();
    let saved = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .ok()
        .and_then(|null| {
            let saved = rustix::io::dup(std::io::stdout()).ok()?;
            rustix::stdio::dup2_stdout(&null).ok()?;
            Some(saved)
        });
    let _restore = Restore(saved);
    f()
}
