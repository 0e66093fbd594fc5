//! What the producer tests share: `DataSourceConfig`s for the probes'
//! data sources, and packets taken apart again.

#![allow(dead_code)]

use protozero::{Decoder, HeapWriter, Message};
use zerotrace_protos::protos::{ProcessStatsConfig, SysStatsConfig};
use zerotrace_protos::upstream_tables::data_source_field;

/// An encoded `DataSourceConfig` named `name`, `f` writing the rest.
pub fn ds_config(name: &str, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        root.append_string(data_source_field::NAME, name);
        f(&mut root);
    }
    w.finish().expect("encodes")
}

/// `linux.process_stats` with a full scan, thread names and a poll period.
pub fn process_stats_config(poll_ms: u32) -> Vec<u8> {
    ds_config("linux.process_stats", |m| {
        let mut c = ProcessStatsConfig::from_message(
            m.begin_nested(data_source_field::PROCESS_STATS_CONFIG),
        );
        c.set_scan_all_processes_on_start(true)
            .set_record_thread_names(true)
            .set_proc_stats_poll_ms(poll_ms);
    })
}

/// `linux.sys_stats` with meminfo and stat periods.
pub fn sys_stats_config(meminfo_ms: u32, stat_ms: u32) -> Vec<u8> {
    ds_config("linux.sys_stats", |m| {
        let mut c =
            SysStatsConfig::from_message(m.begin_nested(data_source_field::SYS_STATS_CONFIG));
        c.set_meminfo_period_ms(meminfo_ms)
            .set_stat_period_ms(stat_ms);
    })
}

/// The packets of a trace (`Trace.packet`, field 1).
pub fn packets_of(trace: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut d = Decoder::new(trace);
    while let Some(f) = d.read_field() {
        let f = f.expect("the trace decodes");
        if f.id == 1 {
            out.push(f.as_bytes().expect("a packet").to_vec());
        }
    }
    out
}

/// A packet's timestamp (field 8) and the payload of `field`, if it has one.
pub fn payload(packet: &[u8], field: u32) -> Option<(Option<u64>, Vec<u8>)> {
    let mut ts = None;
    let mut body = None;
    let mut d = Decoder::new(packet);
    while let Some(f) = d.read_field() {
        let f = f.expect("the packet decodes");
        if f.id == 8 {
            ts = f.as_u64().ok();
        } else if f.id == field {
            body = Some(f.as_bytes().expect("a message").to_vec());
        }
    }
    body.map(|b| (ts, b))
}
