//! The service's commands on the GetAsyncCommand stream, turned into
//! endpoint state and events: setup_tracing (which SMB to use),
//! data source setup, start, stop, flush and clear-incremental-state.
//! Fields are read leniently, as Perfetto's clients do (a missing id is 0);
//! nothing a service sends can make the endpoint panic.

use zerotrace_protos::protos::{DataSourceConfigDecoder, GetAsyncCommandResponseDecoder};

use super::{DataSourceEvent, EndpointEvent, Instance, ProducerEndpoint, SmbSetup, ns};

/// The size of an emulated SMB when the producer named none that fits.
const DEFAULT_EMULATED_SMB: usize = 256 * 1024;

/// An instance from an encoded DataSourceConfig.
fn instance_of(id: u64, config: &[u8]) -> Instance {
    let cfg = DataSourceConfigDecoder::new(config);
    Instance {
        id,
        name: cfg.name().unwrap_or("").to_owned(),
        target_buffer: cfg.target_buffer().unwrap_or(0) as u16,
        config: config.to_vec(),
    }
}

impl ProducerEndpoint {
    /// One command on the GetAsyncCommand stream.
    pub(super) fn command(&mut self, now: u64, data: &[u8]) {
        let c = GetAsyncCommandResponseDecoder::new(data);
        if let Some(s) = c.setup_tracing() {
            let page_kb = s.shared_buffer_page_size_kb().unwrap_or(4) as usize;
            self.setup_tracing(page_kb.saturating_mul(1024));
        } else if let Some(s) = c.setup_data_source() {
            let id = s.new_instance_id().unwrap_or(0);
            let instance = instance_of(id, s.config_bytes().unwrap_or(&[]));
            self.instances.insert(id, instance.clone());
            self.events
                .push_back(EndpointEvent::DataSource(DataSourceEvent::Setup(instance)));
        } else if let Some(s) = c.start_data_source() {
            let id = s.new_instance_id().unwrap_or(0);
            let instance = match self.instances.get(&id) {
                Some(i) => i.clone(),
                None => {
                    let i = instance_of(id, s.config_bytes().unwrap_or(&[]));
                    self.instances.insert(id, i.clone());
                    i
                }
            };
            // Startup writers of this data source write into its buffer now.
            let ours = self.uses_startup_smb();
            if let Some(step) = self
                .startup
                .started(&instance.name, instance.target_buffer, ours)
            {
                self.events.push_back(EndpointEvent::Startup(step));
            }
            self.events
                .push_back(EndpointEvent::DataSource(DataSourceEvent::Start(instance)));
        } else if let Some(s) = c.stop_data_source() {
            let id = s.instance_id().unwrap_or(0);
            if let Some(instance) = self.instances.remove(&id) {
                self.started.retain(|i| i.id != id);
                self.events
                    .push_back(EndpointEvent::DataSource(DataSourceEvent::Stop(instance)));
            }
        } else if let Some(f) = c.flush() {
            let request_id = f.request_id().unwrap_or(0);
            let instances: Vec<Instance> = f
                .data_source_ids()
                .filter_map(|id| self.instances.get(&id).cloned())
                .collect();
            let deadline = self
                .opts
                .flush_reply_timeout
                .map(|d| now.saturating_add(ns(d)));
            self.flushes.insert(request_id, deadline);
            self.events.push_back(EndpointEvent::Flush {
                request_id,
                instances,
            });
        } else if let Some(cl) = c.clear_incremental_state() {
            let instances: Vec<Instance> = cl
                .data_source_ids()
                .filter_map(|id| self.instances.get(&id).cloned())
                .collect();
            for i in instances {
                self.events.push_back(EndpointEvent::DataSource(
                    DataSourceEvent::ClearIncrementalState(i),
                ));
            }
        } else {
            self.stats.protocol_errors += 1;
        }
    }

    fn setup_tracing(&mut self, page_size: usize) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let received = std::mem::take(&mut conn.fds);
        let setup = if conn.startup_smb {
            // Our startup buffer is the SMB already (no fd comes with it).
            SmbSetup::CloseReceived { received }
        } else if conn.emulation {
            let hint = self.opts.smb_size_hint as usize;
            let size = if page_size > 0 && hint >= page_size {
                hint
            } else {
                DEFAULT_EMULATED_SMB
            };
            let size = match size.checked_rem(page_size) {
                Some(rem) => size - rem,
                None => size,
            };
            SmbSetup::Emulated {
                page_size,
                size,
                received,
            }
        } else if received == 0 {
            self.stats.protocol_errors += 1;
            return;
        } else {
            SmbSetup::MapReceived {
                page_size,
                received,
            }
        };
        self.events.push_back(EndpointEvent::Smb(setup));
    }
}
