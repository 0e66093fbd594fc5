//! Threads and processes: tid/pid to utid/upid, with upstream's semantics:
//! utid 0 and upid 0 are reserved for the idle (swapper) thread and process;
//! a thread named in another process, or a pid started again, gets a new
//! row. Names have priorities so a better source wins over a worse one.

use crate::hash::{HashMap, HashSet};

use crate::column_store::strings::StrId;
use crate::storage::Storage;
use crate::storage::rows::{ProcessRow, ThreadRow};

/// How trustworthy a name's source is (higher wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NamePriority {
    /// Anything else.
    Other = 0,
    /// ftrace events (task_newtask, ...).
    Ftrace = 1,
    /// `process_tree`.
    ProcessTree = 2,
    /// A TrackEvent descriptor.
    TrackDescriptor = 3,
    /// A name the trace processor itself gives (the swapper).
    Constant = 4,
}

/// The tracker.
#[derive(Debug, Default)]
pub struct ProcessTracker {
    live_tid: HashMap<(u32, i64), u32>,
    /// Processes whose main thread ended: their other threads are no
    /// longer live. They leave `live_tid` when next looked up, not all at
    /// the end (a walk over every live thread at each process's end is
    /// quadratic in a trace of many processes).
    ended: HashSet<u32>,
    pids: HashMap<(u32, i64), u32>,
    /// The machine of the packet being parsed (0: the host): tids and pids
    /// are per machine.
    machine: u32,
    thread_name_priority: HashMap<u32, NamePriority>,
    process_name_priority: HashMap<u32, NamePriority>,
    /// Threads known to share a process before either's process is known
    /// (a CLONE_THREAD from a thread of unknown process): when one learns
    /// its process, so does the other, as upstream resolves them.
    pending_threads: Vec<(u32, u32)>,
    /// Processes forked by a thread of unknown process (parent utid, child
    /// upid): the child's parent is that thread's process once known.
    pending_parents: Vec<(u32, u32)>,
}

impl ProcessTracker {
    /// Parses the next packets in the context of `machine` (0: the host).
    pub fn set_machine(&mut self, machine: u32) {
        self.machine = machine;
    }

    /// The `machine_id` column of rows made now: the host's rows name
    /// machine 0, as every other machine's name theirs.
    fn machine_id(&self) -> Option<u32> {
        Some(self.machine)
    }

    /// Reserves utid 0 / upid 0 for the swapper.
    pub fn new(storage: &mut Storage) -> Self {
        storage.processes.push(ProcessRow {
            machine_id: Some(0),
            ..ProcessRow::default()
        });
        storage.threads.push(ThreadRow {
            upid: Some(0),
            is_main_thread: Some(true),
            is_idle: true,
            machine_id: Some(0),
            ..ThreadRow::default()
        });
        ProcessTracker::default()
    }

    fn new_thread(&mut self, storage: &mut Storage, tid: i64) -> u32 {
        let utid = u32::try_from(storage.threads.len()).unwrap_or(u32::MAX);
        storage.threads.push(ThreadRow {
            tid,
            machine_id: self.machine_id(),
            ..ThreadRow::default()
        });
        self.live_tid.insert((self.machine, tid), utid);
        utid
    }

    /// Maps tid 0 and pid 0 to the swapper's utid 0 and upid 0 (Linux
    /// system traces), and names it.
    pub fn set_pid_zero_is_idle(&mut self, storage: &mut Storage) {
        if self.pids.contains_key(&(self.machine, 0)) {
            return;
        }
        let name = storage.strings.intern("swapper");
        if self.machine == 0 {
            self.live_tid.insert((0, 0), 0);
            self.pids.insert((0, 0), 0);
            self.set_thread_name(storage, 0, name, NamePriority::Constant);
            return;
        }
        // Another machine's idle task: its own thread and process.
        let upid = self.get_or_create_process(storage, 0);
        let utid = self.get_or_create_thread(storage, 0);
        if let Some(t) = storage.threads.get_mut(utid as usize) {
            t.is_idle = true;
            t.upid = Some(upid);
            t.is_main_thread = Some(true);
        }
        self.set_thread_name(storage, utid, name, NamePriority::Constant);
    }

    /// A process started (fork): always a new upid, with a new main thread
    /// named `name`.
    pub fn start_new_process(
        &mut self,
        storage: &mut Storage,
        ts: i64,
        pid: i64,
        name: StrId,
    ) -> u32 {
        self.pids.remove(&(self.machine, pid));
        self.live_tid.remove(&(self.machine, pid));
        let utid = self.new_thread(storage, pid);
        if let Some(t) = storage.threads.get_mut(utid as usize) {
            t.start_ts = Some(ts);
        }
        self.set_thread_name(storage, utid, name, NamePriority::Ftrace);
        let upid = self.get_or_create_process(storage, pid);
        if let Some(p) = storage.processes.get_mut(upid as usize) {
            p.start_ts = Some(ts);
        }
        self.set_process_name(storage, upid, name, NamePriority::Ftrace);
        upid
    }

    /// A thread started (clone with CLONE_THREAD) by `source_tid`: a new
    /// utid in the source's process.
    pub fn start_new_thread(
        &mut self,
        storage: &mut Storage,
        ts: i64,
        tid: i64,
        source_tid: i64,
        name: StrId,
    ) -> u32 {
        let source = self.get_or_create_thread(storage, source_tid);
        let upid = storage.threads.get(source as usize).and_then(|t| t.upid);
        let utid = self.new_thread(storage, tid);
        if let Some(t) = storage.threads.get_mut(utid as usize) {
            t.start_ts = Some(ts);
            if let Some(upid) = upid {
                t.upid = Some(upid);
                let pid = storage.processes.get(upid as usize).map(|p| p.pid);
                t.is_main_thread = Some(pid == Some(tid));
            }
        }
        if upid.is_none() {
            // Same process as the source, whichever is known first.
            self.pending_threads.push((source, utid));
        }
        self.set_thread_name(storage, utid, name, NamePriority::Ftrace);
        utid
    }

    /// A thread whose tid was seen again as another thread (TrackEvent
    /// descriptors with a new uuid): a new utid, without a process yet.
    pub fn start_reused_thread(&mut self, storage: &mut Storage, tid: i64) -> u32 {
        self.new_thread(storage, tid)
    }

    /// A process whose pid was seen again as another process: a new upid
    /// with its main thread, nameless.
    pub fn start_reused_process(&mut self, storage: &mut Storage, pid: i64) -> u32 {
        self.pids.remove(&(self.machine, pid));
        self.live_tid.remove(&(self.machine, pid));
        self.get_or_create_process(storage, pid)
    }

    /// The live thread with this tid: none once its process has ended.
    fn live_thread(&mut self, storage: &Storage, tid: i64) -> Option<u32> {
        let key = (self.machine, tid);
        let utid = *self.live_tid.get(&key)?;
        let upid = storage.threads.get(utid as usize).and_then(|t| t.upid);
        if upid.is_some_and(|u| self.ended.contains(&u)) {
            self.live_tid.remove(&key);
            return None;
        }
        Some(utid)
    }

    /// The live thread with this tid, if any (none once it or its process
    /// ended).
    pub fn thread_or_null(&mut self, storage: &Storage, tid: i64) -> Option<u32> {
        self.live_thread(storage, tid)
    }

    /// Whether `utid` may still be alive: not ended, nor its process, nor
    /// its pid taken by another process since.
    pub fn is_thread_alive(&self, storage: &Storage, utid: u32) -> bool {
        let Some(t) = storage.threads.get(utid as usize) else {
            return false;
        };
        if t.end_ts.is_some() {
            return false;
        }
        let Some(upid) = t.upid else {
            return true;
        };
        let Some(p) = storage.processes.get(upid as usize) else {
            return false;
        };
        if p.end_ts.is_some() {
            return false;
        }
        self.pids
            .get(&(self.machine, p.pid))
            .is_none_or(|u| *u == upid)
    }

    /// The process with this pid, created without a main thread when none.
    pub fn get_or_create_process_without_main_thread(
        &mut self,
        storage: &mut Storage,
        pid: i64,
    ) -> u32 {
        if let Some(u) = self.pids.get(&(self.machine, pid)) {
            return *u;
        }
        let upid = u32::try_from(storage.processes.len()).unwrap_or(u32::MAX);
        storage.processes.push(ProcessRow {
            pid,
            machine_id: self.machine_id(),
            ..ProcessRow::default()
        });
        self.pids.insert((self.machine, pid), upid);
        upid
    }

    /// The live thread with this tid, created (without a process) when none.
    pub fn get_or_create_thread(&mut self, storage: &mut Storage, tid: i64) -> u32 {
        match self.live_thread(storage, tid) {
            Some(u) => u,
            None => self.new_thread(storage, tid),
        }
    }

    /// A thread ended (`sched_process_free`): its end time, and later
    /// events with its tid start a new thread; the main thread's end ends
    /// its process too (and every thread of it). A tid not live is ignored.
    pub fn end_thread(&mut self, storage: &mut Storage, ts: i64, tid: i64) {
        let Some(utid) = self.live_thread(storage, tid) else {
            return;
        };
        self.live_tid.remove(&(self.machine, tid));
        let Some(t) = storage.threads.get_mut(utid as usize) else {
            return;
        };
        t.end_ts = Some(ts);
        let Some(upid) = t.upid else {
            return;
        };
        let Some(p) = storage.processes.get_mut(upid as usize) else {
            return;
        };
        if p.pid != tid {
            return;
        }
        p.end_ts = Some(ts);
        self.pids.remove(&(self.machine, tid));
        self.ended.insert(upid);
    }

    /// The process with this pid, created (with its main thread) when none.
    pub fn get_or_create_process(&mut self, storage: &mut Storage, pid: i64) -> u32 {
        if let Some(u) = self.pids.get(&(self.machine, pid)) {
            return *u;
        }
        let upid = u32::try_from(storage.processes.len()).unwrap_or(u32::MAX);
        storage.processes.push(ProcessRow {
            pid,
            machine_id: self.machine_id(),
            ..ProcessRow::default()
        });
        self.pids.insert((self.machine, pid), upid);
        self.update_thread(storage, pid, pid);
        upid
    }

    /// The thread `tid` of process `pid` (a tid seen in another process
    /// becomes a new thread).
    pub fn update_thread(&mut self, storage: &mut Storage, tid: i64, pid: i64) -> u32 {
        let upid = self.get_or_create_process(storage, pid);
        let existing = self.live_thread(storage, tid).filter(|u| {
            storage
                .threads
                .get(*u as usize)
                .is_some_and(|t| t.upid.is_none() || t.upid == Some(upid))
        });
        let utid = match existing {
            Some(u) => u,
            None => self.new_thread(storage, tid),
        };
        if let Some(t) = storage.threads.get_mut(utid as usize) {
            if t.upid.is_none() {
                t.upid = Some(upid);
                t.is_main_thread = Some(tid == pid);
            }
        }
        let known = storage.threads.get(utid as usize).and_then(|t| t.upid);
        if let Some(upid) = known {
            self.resolve_pending(storage, utid, upid);
        }
        utid
    }

    /// Process `child` was forked by thread `parent`: its parent is the
    /// thread's process, now or once the thread's process is known.
    pub fn set_parent_thread(&mut self, storage: &mut Storage, child: u32, parent: u32) {
        match storage.threads.get(parent as usize).and_then(|t| t.upid) {
            Some(pupid) => {
                if let Some(row) = storage.processes.get_mut(child as usize) {
                    row.parent_upid = Some(pupid);
                }
            }
            None => self.pending_parents.push((parent, child)),
        }
    }

    /// Thread `utid` now belongs to process `upid`: the threads known to
    /// share its process and the processes it forked follow, and so on
    /// from each of them.
    fn resolve_pending(&mut self, storage: &mut Storage, utid: u32, upid: u32) {
        if self.pending_threads.is_empty() && self.pending_parents.is_empty() {
            return;
        }
        let pid = storage.processes.get(upid as usize).map(|p| p.pid);
        let mut todo = vec![utid];
        while let Some(u) = todo.pop() {
            let (mine, rest): (Vec<_>, Vec<_>) =
                self.pending_parents.drain(..).partition(|(t, _)| *t == u);
            self.pending_parents = rest;
            for (_, child) in mine {
                if let Some(row) = storage.processes.get_mut(child as usize) {
                    row.parent_upid = Some(upid);
                }
            }
            let (mine, rest): (Vec<_>, Vec<_>) = self
                .pending_threads
                .drain(..)
                .partition(|(a, b)| *a == u || *b == u);
            self.pending_threads = rest;
            for (a, b) in mine {
                let other = if a == u { b } else { a };
                if let Some(t) = storage.threads.get_mut(other as usize) {
                    if t.upid.is_none() {
                        t.upid = Some(upid);
                        t.is_main_thread = Some(pid == Some(t.tid));
                    }
                }
                todo.push(other);
            }
        }
    }

    /// Sets a thread's name if `priority` is at least the current one's.
    pub fn set_thread_name(
        &mut self,
        storage: &mut Storage,
        utid: u32,
        name: StrId,
        priority: NamePriority,
    ) {
        if name.is_null() {
            return;
        }
        let cur = self
            .thread_name_priority
            .get(&utid)
            .copied()
            .unwrap_or(NamePriority::Other);
        if priority >= cur {
            if let Some(t) = storage.threads.get_mut(utid as usize) {
                t.name = name;
                self.thread_name_priority.insert(utid, priority);
            }
        }
    }

    /// Sets a process's name if `priority` is at least the current one's.
    pub fn set_process_name(
        &mut self,
        storage: &mut Storage,
        upid: u32,
        name: StrId,
        priority: NamePriority,
    ) {
        if name.is_null() {
            return;
        }
        let cur = self
            .process_name_priority
            .get(&upid)
            .copied()
            .unwrap_or(NamePriority::Other);
        if priority >= cur {
            if let Some(p) = storage.processes.get_mut(upid as usize) {
                p.name = name;
                self.process_name_priority.insert(upid, priority);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapper_is_zero_and_threads_join_processes() {
        let mut s = Storage::default();
        let mut p = ProcessTracker::new(&mut s);
        let utid = p.update_thread(&mut s, 11, 10);
        assert_eq!(utid, 2, "utid 0 swapper, 1 the main thread of pid 10");
        assert_eq!(s.threads[utid as usize].upid, Some(1));
        assert_eq!(s.threads[1].is_main_thread, Some(true));
        assert_eq!(p.update_thread(&mut s, 11, 10), utid);
        // tid 11 seen in another process: a new thread.
        assert_ne!(p.update_thread(&mut s, 11, 20), utid);
        assert_eq!(s.processes[0].pid, 0);
    }

    #[test]
    fn threads_and_forks_of_a_thread_of_unknown_process_follow_it_once_known() {
        let mut s = Storage::default();
        let mut p = ProcessTracker::new(&mut s);
        let name = StrId::NULL;
        // 21 (process unknown) starts thread 22, which starts thread 23;
        // 22 forks process 40.
        let t22 = p.start_new_thread(&mut s, 1, 22, 21, name);
        let t23 = p.start_new_thread(&mut s, 2, 23, 22, name);
        let p40 = p.start_new_process(&mut s, 3, 40, name);
        p.set_parent_thread(&mut s, p40, t22);
        assert_eq!(s.threads[t22 as usize].upid, None);
        assert_eq!(s.processes[p40 as usize].parent_upid, None);
        // The process tree then says 21 is a thread of 20.
        p.update_thread(&mut s, 21, 20);
        let p20 = p.get_or_create_process(&mut s, 20);
        assert_eq!(s.threads[t22 as usize].upid, Some(p20));
        assert_eq!(s.threads[t23 as usize].upid, Some(p20));
        assert_eq!(s.threads[t23 as usize].is_main_thread, Some(false));
        assert_eq!(s.processes[p40 as usize].parent_upid, Some(p20));
    }

    #[test]
    fn a_process_end_ends_its_threads_without_walking_every_live_thread() {
        let mut s = Storage::default();
        let mut p = ProcessTracker::new(&mut s);
        let worker = p.update_thread(&mut s, 11, 10);
        let other = p.update_thread(&mut s, 21, 20);
        let unattached = p.get_or_create_thread(&mut s, 31);
        p.end_thread(&mut s, 100, 10);
        assert_eq!(s.processes[1].end_ts, Some(100));
        // The ended process's other thread is not live: its tid is a new thread.
        assert_ne!(p.get_or_create_thread(&mut s, 11), worker);
        assert_eq!(p.get_or_create_thread(&mut s, 21), other);
        assert_eq!(p.get_or_create_thread(&mut s, 31), unattached);
        // Its pid is a new process; an end of a tid no longer live is ignored.
        let before = s.threads.len();
        p.end_thread(&mut s, 200, 11);
        assert_eq!(s.threads.len(), before);
        assert_ne!(p.get_or_create_process(&mut s, 10), 1);
        // Many processes ended leave the live threads of the others alone.
        for pid in 1000..3000 {
            p.update_thread(&mut s, pid + 1, pid);
            p.end_thread(&mut s, 300, pid);
        }
        assert_eq!(p.get_or_create_thread(&mut s, 21), other);
        assert_eq!(p.ended.len(), 2001);
    }
}
