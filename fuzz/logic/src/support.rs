//! Support shared by the targets: a deterministic service environment (fake
//! clock, heap SMBs the input can rewrite) and a byte-stream cursor.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

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
