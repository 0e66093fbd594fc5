//! ProducerPort: what producers call, and the commands sent back to them on
//! their GetAsyncCommand stream.

use std::collections::BTreeMap;
use std::sync::Arc;

use zerotrace_protos::protos::{GetAsyncCommandResponse, InitializeConnectionResponse};

use super::TracingService;
use super::state::{Producer, SessionState};
use crate::protocol::BufferId;
use crate::protocol::WriterId;
use crate::service::action::{Action, Peer, Reply};
use crate::service::calls::ProducerCall;
use crate::service::commit::{BufferResolver, ProducerSmb, commit_data, scrape};
use crate::service::ids::{DataSourceInstanceId, ProducerId, RequestId, SessionId};
use crate::service::service_packets::encode;
use crate::service::trace_buffer::TraceBuffer;
use crate::shm::{SharedMemoryRegion, ensure_valid_shm_sizes};

/// The buffers a producer may write, as the commit path sees them.
struct Grants<'a> {
    buffers: &'a mut BTreeMap<BufferId, (SessionId, TraceBuffer)>,
    producer: &'a Producer,
    /// Scrape only writers of this session's buffers.
    session: Option<SessionId>,
}

impl BufferResolver for Grants<'_> {
    fn for_commit(&mut self, id: BufferId, writer: u16) -> Option<&mut TraceBuffer> {
        if !self.producer.allowed_buffers.contains(&id) {
            return None;
        }
        if let Some(registered) = WriterId::new(writer).and_then(|w| self.producer.writers.get(&w))
            && *registered != id
        {
            return None;
        }
        self.buffers.get_mut(&id).map(|(_, b)| b)
    }

    fn for_scrape(&mut self, writer: u16) -> Option<&mut TraceBuffer> {
        let id = *self.producer.writers.get(&WriterId::new(writer)?)?;
        if !self.producer.allowed_buffers.contains(&id) {
            return None;
        }
        let (session, buffer) = self.buffers.get_mut(&id)?;
        match self.session {
            Some(s) if s != *session => None,
            _ => Some(buffer),
        }
    }
}

/// `smb_scraping_mode` values.
const SCRAPING_ENABLED: i32 = 1;

impl TracingService {
    /// A call from producer `id`. `attached_smb` is the shared memory the
    /// producer passed with the call (mapped by the driver), if any.
    pub fn handle_producer_call(
        &mut self,
        now: u64,
        id: ProducerId,
        request: RequestId,
        call: ProducerCall,
        attached_smb: Option<Arc<dyn SharedMemoryRegion>>,
    ) {
        self.advance(now);
        let to = Peer::Producer(id);
        let Some(p) = self.producers.get_mut(&id) else {
            return;
        };
        // A relay's own connection calls RelayPort and never initializes.
        if !p.initialized
            && !call.is_relay()
            && !matches!(call, ProducerCall::InitializeConnection { .. })
        {
            self.stats.protocol_errors += 1;
            self.reply(to, request, Reply::Err("InitializeConnection first".into()));
            return;
        }
        match call {
            ProducerCall::InitializeConnection {
                page_size_hint,
                smb_size_hint,
                name,
                smb_scraping_mode,
                producer_provided_shmem,
                sdk_version,
            } => {
                if p.initialized {
                    self.stats.protocol_errors += 1;
                    self.reply(to, request, Reply::Err("already initialized".into()));
                    return;
                }
                p.initialized = true;
                p.name = name;
                p.sdk_version = sdk_version;
                p.page_size_hint = page_size_hint as usize;
                p.smb_size_hint = smb_size_hint as usize;
                p.scraping = smb_scraping_mode == SCRAPING_ENABLED;
                let emulation = !p.transport.can_pass_fds;
                let mut using_provided = false;
                if let (true, Some(region), false) =
                    (producer_provided_shmem, attached_smb, emulation)
                {
                    let page = p.page_size_hint;
                    let valid = ensure_valid_shm_sizes(region.size(), page);
                    if valid.size == region.size() && valid.page_size == page {
                        p.provided_smb = Some(region);
                        using_provided = true;
                    }
                }
                let data = encode(|m| {
                    let mut r = InitializeConnectionResponse::from_message(m);
                    r.set_using_shmem_provided_by_producer(using_provided);
                    r.set_direct_smb_patching_supported(true);
                    r.set_use_shmem_emulation(emulation);
                });
                self.reply(to, request, Reply::done(data));
            }
            ProducerCall::RegisterDataSource(desc) => {
                if p.data_sources.contains_key(&desc.name) {
                    self.reply(
                        to,
                        request,
                        Reply::done(register_error("already registered")),
                    );
                    return;
                }
                if p.data_sources.len() >= self.opts.limits.max_data_sources_per_producer {
                    self.reply(
                        to,
                        request,
                        Reply::done(register_error("too many data sources")),
                    );
                    return;
                }
                let name = desc.name.clone();
                p.data_sources.insert(name.clone(), desc);
                self.stats.data_sources_seen += 1;
                self.reply(to, request, Reply::done(Vec::new()));
                // Running sessions that want it get an instance now.
                let sessions: Vec<SessionId> = self
                    .sessions
                    .values()
                    .filter(|s| matches!(s.state, SessionState::Configured | SessionState::Started))
                    .map(|s| s.id)
                    .collect();
                for s in sessions {
                    self.setup_data_sources_on(s, id, Some(&name));
                }
            }
            ProducerCall::UpdateDataSource(desc) => {
                if let Some(existing) = p.data_sources.get_mut(&desc.name) {
                    *existing = desc;
                }
                self.reply(to, request, Reply::done(Vec::new()));
            }
            ProducerCall::UnregisterDataSource { name } => {
                p.data_sources.remove(&name);
                self.reply(to, request, Reply::done(Vec::new()));
                self.drop_instances(|i| i.producer == id && i.data_source == name);
            }
            ProducerCall::CommitData(req) => {
                let flush = req.flush_request_id;
                let mut grants = Grants {
                    buffers: &mut self.buffers,
                    producer: p,
                    session: None,
                };
                commit_data(
                    &req,
                    id.0,
                    p.smb.as_ref(),
                    &mut grants,
                    &mut self.stats.commit,
                );
                self.reply(to, request, Reply::done(Vec::new()));
                if let Some(flush) = flush {
                    self.flush_acked(id, flush);
                }
            }
            ProducerCall::GetAsyncCommand => {
                if p.async_request.is_some() {
                    self.stats.protocol_errors += 1;
                    self.reply(
                        to,
                        request,
                        Reply::Err("GetAsyncCommand already pending".into()),
                    );
                    return;
                }
                p.async_request = Some(request);
                let queued = std::mem::take(&mut p.queued_commands);
                for (data, attach_smb) in queued {
                    self.push(Action::Reply {
                        to,
                        request,
                        reply: Reply::Ok {
                            data,
                            has_more: true,
                            attach_smb,
                        },
                    });
                }
            }
            ProducerCall::RegisterTraceWriter {
                writer_id,
                target_buffer,
            } => {
                let ids = WriterId::from_wire(writer_id).zip(BufferId::from_wire(target_buffer));
                match ids {
                    Some((writer, buffer))
                        if p.writers.len() < self.opts.limits.max_writers_per_producer =>
                    {
                        p.writers.insert(writer, buffer);
                    }
                    _ => self.stats.protocol_errors += 1,
                }
                self.reply(to, request, Reply::done(Vec::new()));
            }
            ProducerCall::UnregisterTraceWriter { writer_id } => {
                if let Some(w) = WriterId::from_wire(writer_id) {
                    p.writers.remove(&w);
                }
                self.reply(to, request, Reply::done(Vec::new()));
            }
            ProducerCall::NotifyDataSourceStarted { instance_id } => {
                self.reply(to, request, Reply::done(Vec::new()));
                self.instance_started(id, DataSourceInstanceId(instance_id));
            }
            ProducerCall::NotifyDataSourceStopped { instance_id } => {
                self.reply(to, request, Reply::done(Vec::new()));
                self.instance_stopped(id, DataSourceInstanceId(instance_id));
            }
            ProducerCall::ActivateTriggers { names } => {
                let (name, uid) = (p.name.clone(), p.identity.uid);
                self.reply(to, request, Reply::done(Vec::new()));
                for n in names.iter().take(64) {
                    self.activate_trigger(n, &name, uid);
                }
            }
            ProducerCall::Sync => self.reply(to, request, Reply::done(Vec::new())),
            ProducerCall::InitRelay { system_info } => {
                self.handle_init_relay(id, request, system_info);
            }
            ProducerCall::SyncClock { clocks, .. } => self.handle_sync_clock(id, request, clocks),
        }
    }

    /// Producer `id` is gone. Complete chunks and chunks being written that
    /// are still in its SMB are salvaged (when it enabled scraping), then
    /// its data source instances end; what it committed stays.
    pub fn producer_disconnected(&mut self, now: u64, id: ProducerId) {
        self.advance(now);
        self.scrape_producer(id, None);
        self.drop_instances(|i| i.producer == id);
        self.producers.remove(&id);
        let flushes: Vec<_> = self.pending_flushes.keys().copied().collect();
        for f in flushes {
            if let Some(pf) = self.pending_flushes.get_mut(&f) {
                pf.producers.remove(&id);
                if pf.producers.is_empty() {
                    self.complete_flush(f, true);
                }
            }
        }
    }

    /// Copies what producer `id` left in its SMB for `session` (or every
    /// session), if scraping applies to it.
    pub(super) fn scrape_producer(&mut self, id: ProducerId, session: Option<SessionId>) {
        let Some(p) = self.producers.get(&id) else {
            return;
        };
        let Some(smb) = p.smb.as_ref().filter(|_| p.scraping) else {
            return;
        };
        let mut grants = Grants {
            buffers: &mut self.buffers,
            producer: p,
            session,
        };
        scrape(smb, id.0, &mut grants);
    }

    /// Sends a command on the producer's GetAsyncCommand stream, or queues
    /// it until the producer asks for the stream.
    pub(super) fn send_command(&mut self, id: ProducerId, data: Vec<u8>, attach_smb: bool) {
        let Some(p) = self.producers.get_mut(&id) else {
            return;
        };
        match p.async_request {
            Some(request) => self.push(Action::Reply {
                to: Peer::Producer(id),
                request,
                reply: Reply::Ok {
                    data,
                    has_more: true,
                    attach_smb,
                },
            }),
            None => p.queued_commands.push((data, attach_smb)),
        }
    }

    /// Makes sure producer `id` has its SMB, sized for `session`'s config,
    /// and sends `setup_tracing` the first time. Returns false when no SMB
    /// could be made (the producer then gets no data source).
    pub(super) fn ensure_smb(&mut self, id: ProducerId, session: SessionId) -> bool {
        let Some(p) = self.producers.get(&id) else {
            return false;
        };
        if p.smb_sent {
            return true;
        }
        let emulation = !p.transport.can_pass_fds;
        let (size, page) = if emulation {
            (0, self.opts.default_page_size)
        } else {
            let from_config = self.sessions.get(&session).and_then(|s| {
                s.config
                    .producers
                    .iter()
                    .find(|(name, _, _)| *name == p.name)
                    .map(|&(_, size, page)| (size, page))
            });
            let (mut size, mut page) = from_config.unwrap_or((0, 0));
            if size == 0 {
                size = if p.smb_size_hint > 0 {
                    p.smb_size_hint
                } else {
                    self.opts.default_smb_size
                };
            }
            if page == 0 {
                page = if p.page_size_hint > 0 {
                    p.page_size_hint
                } else {
                    self.opts.default_page_size
                };
            }
            let valid = ensure_valid_shm_sizes(size.min(self.opts.max_smb_size), page);
            (valid.size, valid.page_size)
        };
        let provided = p.provided_smb.clone();
        let region = if emulation {
            None
        } else if let Some(region) = provided {
            Some((region.clone(), p.page_size_hint))
        } else {
            match self.env.allocate_smb(id, size, page) {
                Ok(region) => Some((region, page)),
                Err(_) => return false,
            }
        };
        let Some(p) = self.producers.get_mut(&id) else {
            return false;
        };
        let mut attach = false;
        if let Some((region, page)) = region {
            // SAFETY: the region is the producer's SMB (mapped by the driver
            // from the memfd it created or the producer passed, or a heap
            // region a test owns); the core reads its headers only through
            // the ABI's atomics and copies payloads with atomic loads.
            let Ok(smb) = (unsafe { ProducerSmb::new(region.clone(), page) }) else {
                return false;
            };
            attach = p.provided_smb.is_none();
            p.smb = Some(smb);
            p.smb_region = Some(region);
            p.smb_page_size = page;
        } else {
            p.smb_page_size = page;
        }
        p.smb_sent = true;
        let page_kb = (p.smb_page_size / 1024) as u32;
        let data = encode(|m| {
            let mut c = GetAsyncCommandResponse::from_message(m);
            c.begin_setup_tracing()
                .set_shared_buffer_page_size_kb(page_kb);
        });
        self.send_command(id, data, attach);
        true
    }

    /// Encodes and sends `setup_data_source` or `start_data_source`.
    pub(super) fn send_instance_command(
        &mut self,
        producer: ProducerId,
        instance: DataSourceInstanceId,
        config: &[u8],
        start: bool,
    ) {
        let data = encode(|m| {
            let mut c = GetAsyncCommandResponse::from_message(m);
            if start {
                c.begin_start_data_source()
                    .set_new_instance_id(instance.0)
                    .set_config_raw(config);
            } else {
                c.begin_setup_data_source()
                    .set_new_instance_id(instance.0)
                    .set_config_raw(config);
            }
        });
        self.send_command(producer, data, false);
    }

    /// Sends `stop_data_source`.
    pub(super) fn send_stop(&mut self, producer: ProducerId, instance: DataSourceInstanceId) {
        let data = encode(|m| {
            let mut c = GetAsyncCommandResponse::from_message(m);
            c.begin_stop_data_source().set_instance_id(instance.0);
        });
        self.send_command(producer, data, false);
    }
}

fn register_error(msg: &str) -> Vec<u8> {
    encode(|mut m| m.append_string(1, msg))
}
