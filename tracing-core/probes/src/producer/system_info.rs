//! `linux.system_info`: one `cpu_info` packet when the session starts (the
//! CPUs of `/proc/cpuinfo` with their frequencies and capacity), as
//! traced_probes writes it.

use super::probe::{DataSource, ErrorLog, PacketSink, Probe, ProbeContext, ProbeError, ProbeStats};
use crate::procfs::{packets, sample};

/// The data source's name.
pub const NAME: &str = "linux.system_info";

/// The `linux.system_info` data source.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemInfo;

impl DataSource for SystemInfo {
    fn name(&self) -> &'static str {
        NAME
    }

    fn create(&self, _config: &[u8], ctx: &ProbeContext) -> Result<Box<dyn Probe>, ProbeError> {
        Ok(Box::new(SystemInfoProbe {
            ctx: ctx.clone(),
            errors: ErrorLog::default(),
            packets: 0,
        }))
    }
}

struct SystemInfoProbe {
    ctx: ProbeContext,
    errors: ErrorLog,
    packets: u64,
}

impl Probe for SystemInfoProbe {
    fn start(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        match sample::read_cpu_descriptions(&self.ctx.root) {
            Ok(cpus) => {
                sink.write_packet(&mut |p| packets::write_cpu_info(p, now_ns, &cpus));
                self.packets += 1;
            }
            Err(e) => self.errors.record(&self.ctx, NAME, &[e]),
        }
    }

    fn next_deadline(&self) -> Option<u64> {
        None
    }

    fn poll(&mut self, _now_ns: u64, _sink: &mut dyn PacketSink) {}

    fn stats(&self) -> ProbeStats {
        ProbeStats {
            packets: self.packets,
            read_errors: self.errors.count(),
            skipped_polls: 0,
        }
    }
}
