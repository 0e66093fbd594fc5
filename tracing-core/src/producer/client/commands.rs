//! The service's commands on the GetAsyncCommand stream: setup_tracing
//! (mapping the SMB, or a local one under emulation), data source setup,
//! start, stop, flush and clear, each passed to the data source's callback,
//! with the notifications and flush acks the service waits for.

use std::sync::Arc;

use zerotrace_protos::protos::{DataSourceConfigDecoder, GetAsyncCommandResponseDecoder};

use super::sink::IpcSink;
use super::{DataSourceEvent, DataSourceSpec, Inner, Instance, encode, lock};
use crate::ipc::fd::OwnedFd;
use crate::producer::{ArbiterConfig, SharedMemoryArbiter};
use crate::protocol::CommitDataRequest;
use crate::shm::{HeapShm, SharedMemoryRegion};

fn send_notification(inner: &Inner, method: &str, instance: u64) {
    let args = encode(|mut m| m.append_uint64(1, instance));
    let _ = lock(&inner.wire).invoke(method, args, true);
}

fn notify(inner: &Inner, name: &str, event: DataSourceEvent) {
    if let Some(s) = lock(&inner.sources).get(name) {
        (s.callback)(&event);
    }
}

fn spec_of(inner: &Inner, name: &str) -> DataSourceSpec {
    lock(&inner.sources)
        .get(name)
        .map(|s| s.spec.clone())
        .unwrap_or_default()
}

/// Maps the whole SMB the service sent.
#[cfg(unix)]
fn map_received(fd: OwnedFd) -> Option<Arc<dyn SharedMemoryRegion>> {
    let st = rustix::fs::fstat(&fd).ok()?;
    // SAFETY: this is the producer's only mapping of the buffer; the
    // arbiter built on it claims it.
    let shm = unsafe { crate::shm::MappedShm::from_fd(fd, st.st_size as usize, false) }.ok()?;
    Some(Arc::new(shm))
}

/// Maps the SMB the service sent (unreachable: no fd can come here).
#[cfg(not(unix))]
fn map_received(fd: OwnedFd) -> Option<Arc<dyn SharedMemoryRegion>> {
    match fd {}
}

/// One command on the GetAsyncCommand stream.
pub(super) fn command(inner: &Arc<Inner>, data: &[u8], fds: &mut Vec<OwnedFd>) {
    let c = GetAsyncCommandResponseDecoder::new(data);
    if let Some(s) = c.setup_tracing() {
        if lock(&inner.state).using_provided_smb {
            // The service adopted our startup buffer: it is the SMB already
            // (no fd comes with this command).
            fds.clear();
            return;
        }
        let page = s.shared_buffer_page_size_kb().unwrap_or(4) as usize * 1024;
        let (emulation, smb_size) = {
            let st = lock(&inner.state);
            (st.emulation, st.smb_size)
        };
        let region: Arc<dyn SharedMemoryRegion> = if emulation {
            // Our own buffer; its chunks are sent inline.
            let size = if smb_size >= page {
                smb_size
            } else {
                256 * 1024
            };
            match HeapShm::new(size - size % page) {
                Ok(h) => Arc::new(h),
                Err(_) => return,
            }
        } else {
            let Some(fd) = fds.pop() else {
                return;
            };
            fds.clear();
            let Some(shm) = map_received(fd) else {
                return;
            };
            shm
        };
        let sink = IpcSink::new(inner);
        let made = SharedMemoryArbiter::new(region, page, sink.clone(), ArbiterConfig::default());
        if let Ok(a) = made {
            sink.set_arbiter(&a);
            let mut st = lock(&inner.state);
            st.arbiter = Some(a);
            st.page_size = page;
            inner.changed.notify_all();
        }
    } else if let Some(s) = c.setup_data_source() {
        let (id, config) = (
            s.new_instance_id().unwrap_or(0),
            s.config_bytes().unwrap_or(&[]).to_vec(),
        );
        let cfg = DataSourceConfigDecoder::new(&config);
        let instance = Instance {
            id,
            name: cfg.name().unwrap_or("").to_owned(),
            target_buffer: cfg.target_buffer().unwrap_or(0) as u16,
            config: config.clone(),
        };
        lock(&inner.state).instances.insert(id, instance.clone());
        let name = instance.name.clone();
        notify(inner, &name, DataSourceEvent::Setup(instance));
    } else if let Some(s) = c.start_data_source() {
        let id = s.new_instance_id().unwrap_or(0);
        let instance = lock(&inner.state).instances.get(&id).cloned();
        let instance = instance.unwrap_or_else(|| {
            let config = s.config_bytes().unwrap_or(&[]).to_vec();
            let cfg = DataSourceConfigDecoder::new(&config);
            Instance {
                id,
                name: cfg.name().unwrap_or("").to_owned(),
                target_buffer: cfg.target_buffer().unwrap_or(0) as u16,
                config: config.clone(),
            }
        });
        let name = instance.name.clone();
        // Startup writers of this data source write into its buffer now.
        super::startup::on_start(inner, &instance);
        notify(inner, &name, DataSourceEvent::Start(instance.clone()));
        {
            let mut st = lock(&inner.state);
            st.started.push(instance);
            inner.changed.notify_all();
        }
        if spec_of(inner, &name).will_notify_on_start {
            send_notification(inner, "NotifyDataSourceStarted", id);
        }
    } else if let Some(s) = c.stop_data_source() {
        let id = s.instance_id().unwrap_or(0);
        let instance = lock(&inner.state).instances.remove(&id);
        if let Some(instance) = instance {
            let name = instance.name.clone();
            notify(inner, &name, DataSourceEvent::Stop(instance));
            lock(&inner.state).started.retain(|i| i.id != id);
            let arbiter = lock(&inner.state).arbiter.clone();
            if let Some(a) = arbiter {
                a.flush_pending_commit_data_requests(None);
            }
            if spec_of(inner, &name).will_notify_on_stop {
                send_notification(inner, "NotifyDataSourceStopped", id);
            }
        }
    } else if let Some(f) = c.flush() {
        let request = f.request_id().unwrap_or(0);
        let ids: Vec<u64> = f.data_source_ids().collect();
        for id in ids {
            let instance = lock(&inner.state).instances.get(&id).cloned();
            if let Some(i) = instance {
                let name = i.name.clone();
                notify(inner, &name, DataSourceEvent::Flush(i));
            }
        }
        let arbiter = lock(&inner.state).arbiter.clone();
        if let Some(a) = arbiter {
            a.flush_pending_commit_data_requests(None);
        }
        let req = CommitDataRequest {
            flush_request_id: Some(request),
            ..Default::default()
        };
        let _ = lock(&inner.wire).invoke("CommitData", req.encode(), true);
    } else if let Some(cl) = c.clear_incremental_state() {
        for id in cl.data_source_ids() {
            let instance = lock(&inner.state).instances.get(&id).cloned();
            if let Some(i) = instance {
                let name = i.name.clone();
                notify(inner, &name, DataSourceEvent::ClearIncrementalState(i));
            }
        }
    }
}
