//! One ftrace event (split from its bundle by the loader, at its own
//! time): `print` goes to the systrace (atrace) parser. Other events are
//! not read yet.

use zerotrace_protos::protos::FtraceEventDecoder;

use super::Parser;

/// Parses one event recorded on `cpu`.
pub fn parse(p: &mut Parser, _cpu: u32, bytes: &[u8], ts: i64) {
    let ev = FtraceEventDecoder::new(bytes);
    let tid = i64::from(ev.pid().unwrap_or(0));
    if let Some(print) = ev.print() {
        if let Some(buf) = print.buf() {
            super::systrace::parse(p, ts, tid, buf);
        }
    }
}
