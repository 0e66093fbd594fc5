//! The probes as a producer: connects to a tracing service (ours or
//! Perfetto's `traced`), registers each data source of a [`Registry`], and
//! runs a [`Probe`] per started instance on one thread of its own.
//!
//! The producer client calls data source callbacks on its own thread; they
//! only pass commands to the probes' thread, which owns every probe and its
//! [`TraceWriter`] (writers are not shared between threads). That thread
//! sleeps until the earliest deadline of its probes or the next command.
//! A stop is answered only once the probe wrote what was due and its
//! writer was flushed, so the client's stop notification follows the data.
//! Instances of a connection that was lost are dropped: the new service
//! starts its own.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{
    DataSourceEvent, DataSourceSpec, Instance, ProducerClient, ProducerClientError,
    ProducerOptions, TraceWriter,
};

use super::probe::{DataSource, Probe, ProbeContext, ProbeStats};
use super::{ds_config, ftrace, perf, process_stats, sys_stats, system_info};

/// How long a stop or flush callback waits for the probes' thread.
pub(crate) const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a stop or flush callback that is still waiting sends the
/// commits of the probes' writers (see [`Answers::commit`]).
const COMMIT_SLICE: Duration = Duration::from_millis(10);
/// How often the probes' thread looks at the connection when idle.
const CONNECTION_CHECK: Duration = Duration::from_millis(250);

/// The data sources a producer serves.
#[derive(Clone, Default)]
pub struct Registry {
    sources: Vec<Arc<dyn DataSource>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// No data sources.
    pub fn empty() -> Self {
        Registry::default()
    }

    /// `linux.ftrace` (tracefs found or mounted when a session first
    /// asks for it), `linux.process_stats`, `linux.sys_stats`,
    /// `linux.system_info` and `linux.perf`.
    pub fn standard() -> Self {
        let mut r = Registry::empty();
        r.add(ftrace::FtraceSource::system())
            .add(process_stats::ProcessStatsSource)
            .add(sys_stats::SysStatsSource)
            .add(system_info::SystemInfo)
            .add(perf::PerfSource::system());
        r
    }

    /// Adds `source`, replacing one of the same name.
    pub fn add(&mut self, source: impl DataSource + 'static) -> &mut Self {
        let name = source.name();
        self.sources.retain(|s| s.name() != name);
        self.sources.push(Arc::new(source));
        self
    }

    /// The names served, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.sources.iter().map(|s| s.name()).collect()
    }

    fn get(&self, name: &str) -> Option<&Arc<dyn DataSource>> {
        self.sources.iter().find(|s| s.name() == name)
    }
}

/// Settings of the probes producer.
#[derive(Debug, Clone)]
pub struct ProbesOptions {
    /// The producer's name as the service lists it.
    pub name: String,
    /// Where the probes read and log.
    pub context: ProbeContext,
}

impl Default for ProbesOptions {
    fn default() -> Self {
        ProbesOptions {
            name: "zerotrace-probes".into(),
            context: ProbeContext::system(),
        }
    }
}

/// Counts of a probes producer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuntimeStats {
    /// Instances started.
    pub started: u64,
    /// Instances that could not be started (bad config, no writer).
    pub failed: u64,
    /// Instances stopped by the service.
    pub stopped: u64,
    /// Instances dropped because the connection was lost.
    pub dropped: u64,
    /// Stops and flushes answered to the service before the probes' thread
    /// had done them (it was busy past the answer timeout): their data
    /// came late or not at all. Said in the log; the service counts such a
    /// flush as failed (`traced_flushes_failed`) when it gave up first.
    pub late_answers: u64,
    /// The sum of the stopped and dropped instances' counts.
    pub totals: ProbeStats,
}

enum Command {
    Start(Instance),
    Stop(u64, SyncSender<()>),
    Flush(u64, SyncSender<()>),
    /// The service asks the instance to clear its incremental state.
    ClearIncrementalState(u64),
    /// A probe has data to read before its deadline (see [`Waker`]).
    Wake,
    Shutdown,
}

/// A probes producer, connected (or connecting) to a service.
pub struct ProbesProducer {
    client: Arc<ProducerClient>,
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
    stats: Arc<Mutex<RuntimeStats>>,
}

impl std::fmt::Debug for ProbesProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbesProducer").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ProbesProducer {
    /// Starts serving `registry` to the service at `endpoint`: returns at
    /// once; the client connects in the background, keeps trying while the
    /// service is absent and reconnects after losing it.
    pub fn start(
        endpoint: &Endpoint,
        registry: Registry,
        options: ProbesOptions,
    ) -> Result<ProbesProducer, ProducerClientError> {
        let client = Arc::new(ProducerClient::start(
            endpoint,
            ProducerOptions {
                name: options.name.clone(),
                ..ProducerOptions::default()
            },
        )?);
        let (commands, rx) = mpsc::channel();
        let stats = Arc::new(Mutex::new(RuntimeStats::default()));
        for source in &registry.sources {
            let tx = commands.clone();
            // Weak: the client holds this callback.
            let weak = Arc::downgrade(&client);
            let answers = Answers {
                stats: stats.clone(),
                log: options.context.log.clone(),
                timeout: ANSWER_TIMEOUT,
                slice: COMMIT_SLICE,
                commit: Box::new(move || {
                    if let Some(c) = weak.upgrade() {
                        c.flush(None);
                    }
                }),
            };
            client.register_data_source(
                DataSourceSpec {
                    name: source.name().into(),
                    will_notify_on_stop: true,
                    ..DataSourceSpec::default()
                },
                move |event| on_event(&tx, event, &answers),
            )?;
        }
        (options.context.log)(&format!(
            "serving {} as producer {:?} on {endpoint}",
            registry.names().join(", "),
            options.name
        ));
        let mut ctx = options.context;
        let wake = Mutex::new(commands.clone());
        ctx.wake = Arc::new(move || {
            let _ = lock(&wake).send(Command::Wake);
        });
        let driver = Driver {
            client: client.clone(),
            registry,
            ctx,
            running: HashMap::new(),
            stats: stats.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("zerotrace-probes".into())
            .spawn(move || driver.run(&rx))?;
        Ok(ProbesProducer {
            client,
            commands,
            thread: Some(thread),
            stats,
        })
    }

    /// Waits until the producer is connected.
    pub fn wait_connected(&self, timeout: Duration) -> Result<(), ProducerClientError> {
        self.client.wait_connected(timeout)
    }

    /// Whether the producer is connected now.
    pub fn is_connected(&self) -> bool {
        self.client.is_connected()
    }

    /// Its counts so far.
    pub fn stats(&self) -> RuntimeStats {
        *lock(&self.stats)
    }
}

impl Drop for ProbesProducer {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How the client's thread waits for the probes' thread to do a stop or a
/// flush, and where it says that it could wait no longer.
struct Answers {
    stats: Arc<Mutex<RuntimeStats>>,
    log: super::probe::Logger,
    timeout: Duration,
    /// How long each wait lasts before the commits are sent again.
    slice: Duration,
    /// Sends the commits of the probes' writers. The callback runs on the
    /// client's thread that sends commits; while it waits, a writer of the
    /// probes' thread that found the shared memory buffer full would wait
    /// for it (the service frees chunks once told of them), and the
    /// probes' thread could not answer: the two would wait on each other
    /// until the timeout, every flush.
    commit: Box<dyn Fn() + Send + Sync>,
}

impl Answers {
    /// Waits for `wait` up to the timeout, sending the commits between
    /// slices; whether it was answered.
    fn wait(&self, wait: &Receiver<()>) -> bool {
        let start = std::time::Instant::now();
        loop {
            match wait.recv_timeout(self.slice) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return true,
                Err(RecvTimeoutError::Timeout) if start.elapsed() >= self.timeout => return false,
                Err(RecvTimeoutError::Timeout) => (self.commit)(),
            }
        }
    }
}

/// A data source callback (on the client's thread): hands the event to
/// the probes' thread, and for a stop or flush waits until it is done
/// (sending the probes' commits meanwhile, see [`Answers::commit`]), or
/// for `answers.timeout`: an answer given without it is counted
/// ([`RuntimeStats::late_answers`]) and said in the log.
fn on_event(tx: &Sender<Command>, event: &DataSourceEvent, answers: &Answers) {
    let answered = |make: fn(u64, SyncSender<()>) -> Command, i: &Instance, what: &str| {
        let (done, wait) = mpsc::sync_channel(1);
        if tx.send(make(i.id, done)).is_ok() && !answers.wait(&wait) {
            lock(&answers.stats).late_answers += 1;
            (answers.log)(&format!(
                "{}: instance {}: {what} answered before it was done: the probes' thread \
                 was busy for {:?}; its data comes late or is lost",
                i.name, i.id, answers.timeout
            ));
        }
    };
    match event {
        DataSourceEvent::Start(i) => {
            let _ = tx.send(Command::Start(i.clone()));
        }
        DataSourceEvent::Stop(i) => answered(Command::Stop, i, "stop"),
        DataSourceEvent::Flush(i) => answered(Command::Flush, i, "flush"),
        DataSourceEvent::ClearIncrementalState(i) => {
            let _ = tx.send(Command::ClearIncrementalState(i.id));
        }
        DataSourceEvent::Setup(_) => {}
    }
}

struct Running {
    name: String,
    probe: Box<dyn Probe>,
    writer: TraceWriter,
    generation: u64,
    /// The tracing session (`DataSourceConfig.tracing_session_id`).
    session: Option<u64>,
}

/// The probes' thread.
struct Driver {
    client: Arc<ProducerClient>,
    registry: Registry,
    ctx: ProbeContext,
    running: HashMap<u64, Running>,
    stats: Arc<Mutex<RuntimeStats>>,
}

impl Driver {
    fn now(&self) -> u64 {
        (self.ctx.clock)()
    }

    fn log(&self, line: &str) {
        (self.ctx.log)(line);
    }

    fn run(mut self, rx: &Receiver<Command>) {
        loop {
            let now = self.now();
            let mut polled = Vec::new();
            for (&id, r) in self.running.iter_mut() {
                if r.probe.next_deadline().is_some_and(|d| d <= now) {
                    r.probe.poll(now, &mut r.writer);
                    polled.push(id);
                }
            }
            for id in polled {
                self.share_pids(id, now);
            }
            self.drop_lost();
            let wait = self
                .running
                .values()
                .filter_map(|r| r.probe.next_deadline())
                .min()
                .map_or(CONNECTION_CHECK, |d| {
                    Duration::from_nanos(d.saturating_sub(self.now())).min(CONNECTION_CHECK)
                });
            match rx.recv_timeout(wait) {
                Ok(Command::Start(i)) => self.start(i),
                Ok(Command::Stop(id, done)) => {
                    self.stop(id);
                    let _ = done.send(());
                }
                Ok(Command::Flush(id, done)) => {
                    let now = self.now();
                    if let Some(r) = self.running.get_mut(&id) {
                        r.probe.flush(now, &mut r.writer);
                    }
                    self.share_pids(id, now);
                    if let Some(r) = self.running.get_mut(&id) {
                        r.writer.flush(None);
                    }
                    let _ = done.send(());
                }
                Ok(Command::ClearIncrementalState(id)) => {
                    let now = self.now();
                    if let Some(r) = self.running.get_mut(&id) {
                        r.probe.clear_incremental_state(now, &mut r.writer);
                    }
                }
                // The loop looks at the deadlines again.
                Ok(Command::Wake) => {}
                Ok(Command::Shutdown) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        let ids: Vec<u64> = self.running.keys().copied().collect();
        for id in ids {
            self.stop(id);
        }
    }

    /// Passes the pids instance `id` saw to the other instances of its
    /// tracing session (ftrace's tasks to process_stats).
    fn share_pids(&mut self, id: u64, now: u64) {
        let Some(r) = self.running.get_mut(&id) else {
            return;
        };
        let pids = r.probe.take_seen_pids();
        let renamed = r.probe.take_renamed_pids();
        let Some(session) = r
            .session
            .filter(|_| !pids.is_empty() || !renamed.is_empty())
        else {
            return;
        };
        for (&other, r) in self.running.iter_mut() {
            if other != id && r.session == Some(session) {
                if !pids.is_empty() {
                    r.probe.on_pids(now, &pids, &mut r.writer);
                }
                if !renamed.is_empty() {
                    r.probe.on_renamed_pids(now, &renamed, &mut r.writer);
                }
            }
        }
    }

    fn start(&mut self, instance: Instance) {
        let Some(source) = self.registry.get(&instance.name).cloned() else {
            return;
        };
        let generation = self.client.reconnects();
        let probe = match source.create(&instance.config, &self.ctx) {
            Ok(p) => p,
            Err(e) => return self.fail(&instance, &e.to_string()),
        };
        let writer = match self.client.create_trace_writer_for(&instance) {
            Ok(w) => w,
            Err(e) => return self.fail(&instance, &format!("no trace writer: {e}")),
        };
        self.log(&format!(
            "{}: instance {} started (buffer {})",
            instance.name, instance.id, instance.target_buffer
        ));
        let mut r = Running {
            session: ds_config::tracing_session_id(&instance.config),
            name: instance.name,
            probe,
            writer,
            generation,
        };
        r.probe.start(self.now(), &mut r.writer);
        // Whatever the start wrote is visible at once, not at the first poll.
        r.writer.flush(None);
        lock(&self.stats).started += 1;
        if let Some(old) = self.running.insert(instance.id, r) {
            self.finish(instance.id, old, "replaced");
        }
    }

    fn fail(&self, instance: &Instance, why: &str) {
        self.log(&format!(
            "{}: instance {} not started: {why}",
            instance.name, instance.id
        ));
        lock(&self.stats).failed += 1;
    }

    fn stop(&mut self, id: u64) {
        let now = self.now();
        if let Some(r) = self.running.get_mut(&id) {
            // What it read last still describes its session's processes.
            r.probe.flush(now, &mut r.writer);
        }
        self.share_pids(id, now);
        let Some(mut r) = self.running.remove(&id) else {
            return;
        };
        r.probe.stop(now, &mut r.writer);
        r.writer.flush(None);
        lock(&self.stats).stopped += 1;
        self.finish(id, r, "stopped");
    }

    /// Drops the instances of a connection that is gone.
    fn drop_lost(&mut self) {
        let connected = self.client.is_connected();
        let generation = self.client.reconnects();
        let lost: Vec<u64> = self
            .running
            .iter()
            .filter(|(_, r)| !connected || r.generation != generation)
            .map(|(&id, _)| id)
            .collect();
        for id in lost {
            if let Some(r) = self.running.remove(&id) {
                lock(&self.stats).dropped += 1;
                self.finish(id, r, "dropped: the connection to the service was lost");
            }
        }
    }

    /// Logs an instance's counts and adds them to the totals.
    fn finish(&self, id: u64, r: Running, how: &str) {
        let s = r.probe.stats();
        self.log(&format!(
            "{}: instance {id} {how}: {} packets, {} read errors, {} skipped polls",
            r.name, s.packets, s.read_errors, s.skipped_polls
        ));
        let mut stats = lock(&self.stats);
        let t = &mut stats.totals;
        t.packets = t.packets.saturating_add(s.packets);
        t.read_errors = t.read_errors.saturating_add(s.read_errors);
        t.skipped_polls = t.skipped_polls.saturating_add(s.skipped_polls);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(timeout: Duration) -> (Answers, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let l = lines.clone();
        let a = Answers {
            stats: Arc::default(),
            log: Arc::new(move |line| lock(&l).push(line.to_string())),
            timeout,
            slice: Duration::ZERO,
            commit: Box::new(|| {}),
        };
        (a, lines)
    }

    fn instance() -> Instance {
        Instance {
            id: 7,
            name: "linux.perf".into(),
            target_buffer: 0,
            config: Vec::new(),
        }
    }

    /// A flush the probes' thread does not do (it is busy: nothing takes
    /// the command) is answered at the timeout, counted and said.
    #[test]
    fn a_flush_the_probes_thread_does_not_do_is_counted_and_said() {
        let (tx, rx) = mpsc::channel();
        let (a, lines) = answers(Duration::ZERO);
        on_event(&tx, &DataSourceEvent::Flush(instance()), &a);
        assert!(matches!(rx.try_recv(), Ok(Command::Flush(7, _))));
        assert_eq!(lock(&a.stats).late_answers, 1);
        let lines = lock(&lines);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("linux.perf: instance 7: flush answered before"));
    }

    /// A flush done before the wait is not late.
    #[test]
    fn a_flush_done_in_time_is_not_counted() {
        let (tx, rx) = mpsc::channel::<Command>();
        let (a, lines) = answers(Duration::from_secs(3600));
        let probes = std::thread::spawn(move || {
            if let Ok(Command::Flush(_, done)) = rx.recv() {
                let _ = done.send(());
            }
        });
        on_event(&tx, &DataSourceEvent::Flush(instance()), &a);
        probes.join().unwrap();
        assert_eq!(lock(&a.stats).late_answers, 0);
        assert!(lock(&lines).is_empty());
    }

    /// The probes' thread cannot answer until its writer gets a chunk,
    /// which only the commits sent by the waiting callback free (a full
    /// shared memory buffer): the callback sends them while it waits, and
    /// the flush is answered in time. (Without them it would wait for the
    /// whole timeout, a minute here, and count the flush late.)
    #[test]
    fn a_waiting_flush_sends_the_commits_the_probes_thread_waits_for() {
        let (tx, rx) = mpsc::channel::<Command>();
        let (committed, commits) = mpsc::channel::<()>();
        let (mut a, lines) = answers(Duration::from_secs(60));
        let committed = Mutex::new(committed);
        a.commit = Box::new(move || {
            let _ = lock(&committed).send(());
        });
        let probes = std::thread::spawn(move || {
            if let Ok(Command::Flush(_, done)) = rx.recv() {
                // Its writer waits for a free chunk: for a commit.
                let _ = commits.recv();
                let _ = done.send(());
            }
        });
        on_event(&tx, &DataSourceEvent::Flush(instance()), &a);
        probes.join().unwrap();
        assert_eq!(lock(&a.stats).late_answers, 0);
        assert!(lock(&lines).is_empty());
    }
}
