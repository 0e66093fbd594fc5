//! The `zerotrace` binary, run as a subprocess: every command, and every
//! error path with its exit code and one clear line.

use crate::support::zerotrace;
use crate::tp_support;
use crate::upstream;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use upstream::upstream_root;

use prost::Message;
use prost_reflect::DynamicMessage;
use zerotrace_protos::protos::TracePacketDecoder;

mod convert_round_trip;
mod errors;
mod inspect;
mod record;
mod sessions;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A private directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zt-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A `zerotraced` on sockets in `dir`, killed on drop.
struct Daemon {
    child: Child,
    consumer: PathBuf,
}

impl Daemon {
    fn start(dir: &Path) -> Daemon {
        let (p, c) = (dir.join("p"), dir.join("c"));
        let child = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
            .arg("--producer-socket")
            .arg(&p)
            .arg("--consumer-socket")
            .arg(&c)
            .arg("--quiet")
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !c.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "zerotraced did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Daemon { child, consumer: c }
    }

    fn socket(&self) -> &str {
        self.consumer.to_str().unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `trace_config` packet of a trace, encoded.
fn trace_config_of(trace: &[u8]) -> Vec<u8> {
    for f in protozero::Decoder::new(trace) {
        let p = TracePacketDecoder::new(f.unwrap().as_bytes().unwrap());
        if let Some(c) = p.trace_config_bytes() {
            return c.to_vec();
        }
    }
    panic!("no trace_config packet");
}

/// `protoc --encode=perfetto.protos.TraceConfig` of `text`, upstream schema.
fn protoc_encode(text: &str) -> Vec<u8> {
    let proto = "protos/perfetto/config/trace_config.proto";
    upstream::protoc_encode(&upstream_root(), proto, "perfetto.protos.TraceConfig", text)
        .expect("protoc --encode")
}

const UNSERVED_CONFIG: &str = r#"
# Data sources no producer serves here: they must pass through unchanged.
buffers { size_kb: 2048 fill_policy: RING_BUFFER }
buffers: { size_kb: 512, fill_policy: DISCARD }
data_sources {
  config {
    name: "linux.ftrace"
    target_buffer: 0
    ftrace_config {
      ftrace_events: ["sched/sched_switch", "sched/sched_wakeup", "power/cpu_frequency"]
      atrace_categories: "gfx"
      buffer_size_kb: 0x800
      drain_period_ms: 250
    }
  }
}
data_sources {
  config {
    name: "linux.process_stats"
    target_buffer: 1
    process_stats_config {
      scan_all_processes_on_start: true
      proc_stats_poll_ms: 1000
      quirks: [DISABLE_ON_DEMAND]
    }
  }
}
duration_ms: 400
flush_period_ms: 30000
incremental_state_config { clear_period_ms: 5000 }
"#;

/// `protoc --encode=perfetto.protos.Trace` of `text`, upstream schema.
fn protoc_encode_trace(text: &str) -> Vec<u8> {
    let proto = "protos/perfetto/trace/trace.proto";
    upstream::protoc_encode(&upstream_root(), proto, "perfetto.protos.Trace", text)
        .expect("protoc --encode")
}

/// A trace whose TrackEvents (with dict and array annotations) sit in a
/// `compressed_packets` packet, as the service writes with deflate.
fn compressed_trace() -> Vec<u8> {
    use std::io::Write;
    use zerotrace_protos::protos::TracePacket;
    let packet = |f: &dyn Fn(&mut TracePacket<'_>)| {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(2);
            f(&mut p);
        }
        w.finish().unwrap()
    };
    let record = |out: &mut Vec<u8>, p: &[u8]| {
        let mut w = protozero::HeapWriter::new();
        w.root().append_bytes(1, p);
        out.extend(w.finish().unwrap());
    };
    let descriptor = packet(&|p| {
        let mut d = p.begin_track_descriptor();
        d.set_uuid(7);
        d.begin_thread()
            .set_pid(10)
            .set_tid(11)
            .set_thread_name("main");
    });
    let begin = packet(&|p| {
        p.set_timestamp(1_000);
        let mut e = p.begin_track_event();
        e.set_type_raw(1).set_track_uuid(7).set_name("work");
        {
            let mut d = e.add_debug_annotations();
            d.set_name("d");
            d.add_dict_entries().set_name("a").set_int_value(1);
            let mut b = d.add_dict_entries();
            b.set_name("b");
            b.add_array_values().set_string_value("x");
            b.add_array_values().set_bool_value(true);
        }
        let mut a = e.add_debug_annotations();
        a.set_name("arr");
        a.add_array_values().set_int_value(1);
        a.add_array_values().set_int_value(2);
    });
    let end = packet(&|p| {
        p.set_timestamp(2_000);
        p.begin_track_event().set_type_raw(2).set_track_uuid(7);
    });
    let mut inner = Vec::new();
    record(&mut inner, &begin);
    record(&mut inner, &end);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&inner).unwrap();
    let zlib = z.finish().unwrap();
    let compressed = packet(&|p| {
        p.set_compressed_packets(&zlib);
    });
    let mut trace = Vec::new();
    record(&mut trace, &descriptor);
    record(&mut trace, &compressed);
    trace
}
