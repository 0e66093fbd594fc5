//! Synthetic `linux.perf` traces, written with the generated writers in
//! the layout Perfetto's traced_perf uses: per sequence, a first packet
//! that clears the incremental state and carries `PerfSampleDefaults`,
//! then samples flagged `SEQ_NEEDS_INCREMENTAL_STATE`, each interning the
//! strings, mappings, frames and callstack it is the first to use
//! (callstacks root first). Shared by the cli's unit tests of the sample
//! reader and its integration tests.

#![allow(dead_code)]

use std::collections::HashMap;

use zerotrace_protos::protos::TracePacket;
use zerotrace_protos::protos::perf_events::Counter;
use zerotrace_protos::protos::{
    Callstack, Frame, InternedString, Mapping, ModuleSymbols, PerfSample, PerfSampleDefaults,
};
use zerotrace_protos::upstream_tables::{interned_data_field, packet_defaults_field, packet_field};

/// `SEQ_INCREMENTAL_STATE_CLEARED`.
pub const CLEARED: u32 = 1;
/// `SEQ_NEEDS_INCREMENTAL_STATE`.
pub const NEEDS: u32 = 2;

/// One frame of a synthetic stack.
#[derive(Debug, Clone, Copy)]
pub struct Fr {
    /// Interned function name (`None`: the frame is unnamed).
    pub name: Option<&'static str>,
    /// The mapping's path (`/`-separated; interned as components).
    pub path: &'static str,
    /// The mapping's build id, raw.
    pub build_id: &'static [u8],
    /// The pc relative to the file.
    pub rel_pc: u64,
}

/// A named frame in `/bin/app`.
pub fn app(name: &'static str, rel_pc: u64) -> Fr {
    Fr {
        name: Some(name),
        path: "/bin/app",
        build_id: b"\x01\x02\x03\x04",
        rel_pc,
    }
}

/// A trace being written: `Trace.packet` records.
#[derive(Debug, Default)]
pub struct Trace {
    bytes: Vec<u8>,
}

impl Trace {
    /// Appends one packet written by `f`.
    pub fn packet(&mut self, f: impl FnOnce(&mut TracePacket<'_>)) {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            f(&mut p);
        }
        let packet = w.finish().unwrap();
        let mut w = protozero::HeapWriter::new();
        w.root().append_bytes(1, &packet);
        self.bytes.extend(w.finish().unwrap());
    }

    /// Appends a `module_symbols` packet: per address, its functions
    /// innermost first.
    pub fn module_symbols(&mut self, path: &str, build_id: &[u8], addrs: &[(u64, &[&str])]) {
        self.packet(|p| {
            let mut m =
                ModuleSymbols::from_message(p.message().begin_nested(packet_field::MODULE_SYMBOLS));
            m.set_path(path);
            m.message().append_bytes(2, build_id);
            for (addr, names) in addrs {
                let mut a = m.add_address_symbols();
                a.set_address(*addr);
                for n in *names {
                    a.add_lines()
                        .set_function_name(n)
                        .set_source_file_name("src.c")
                        .set_line_number(3);
                }
            }
        });
    }

    /// The trace's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// One `linux.perf` sequence's interning, as a recorder keeps it.
#[derive(Debug)]
pub struct PerfSeq {
    /// `trusted_packet_sequence_id`.
    pub seq: u32,
    next: u64,
    strings: HashMap<(u32, Vec<u8>), u64>,
    mappings: HashMap<(&'static str, &'static [u8]), u64>,
    frames: HashMap<(Option<&'static str>, &'static str, u64), u64>,
    callstacks: HashMap<Vec<u64>, u64>,
}

/// What one packet must intern before its sample.
#[derive(Default)]
struct NewEntries {
    strings: Vec<(u32, u64, Vec<u8>)>,
    mappings: Vec<(u64, u64, u64, Vec<u64>)>,
    frames: Vec<(u64, u64, u64, u64)>,
    callstacks: Vec<(u64, Vec<u64>)>,
}

impl PerfSeq {
    /// A sequence with nothing interned.
    pub fn new(seq: u32) -> PerfSeq {
        PerfSeq {
            seq,
            next: 1,
            strings: HashMap::new(),
            mappings: HashMap::new(),
            frames: HashMap::new(),
            callstacks: HashMap::new(),
        }
    }

    /// The first packet (and the one after any clear): incremental state
    /// cleared, the defaults with a cpu-clock timebase of `period` ns
    /// (`None`: by frequency, 100 Hz).
    pub fn start(&mut self, t: &mut Trace, period: Option<u64>) {
        *self = PerfSeq::new(self.seq);
        let seq = self.seq;
        t.packet(|p| {
            p.set_trusted_packet_sequence_id(seq);
            p.set_sequence_flags(CLEARED);
            let mut d = p
                .message()
                .begin_nested(packet_field::TRACE_PACKET_DEFAULTS);
            d.append_varint(packet_defaults_field::TIMESTAMP_CLOCK_ID, 6);
            let mut psd = PerfSampleDefaults::from_message(
                d.begin_nested(packet_defaults_field::PERF_SAMPLE_DEFAULTS),
            );
            let mut tb = psd.begin_timebase();
            tb.set_counter(Counter::SwCpuClock);
            match period {
                Some(ns) => tb.set_period(ns),
                None => tb.set_frequency(100),
            };
        });
    }

    fn string(&mut self, field: u32, s: &[u8], new: &mut NewEntries) -> u64 {
        if let Some(&i) = self.strings.get(&(field, s.to_vec())) {
            return i;
        }
        let i = self.next;
        self.next += 1;
        self.strings.insert((field, s.to_vec()), i);
        new.strings.push((field, i, s.to_vec()));
        i
    }

    /// The callstack iid of `stack` (root first), interning what is new.
    fn intern(&mut self, stack: &[Fr], new: &mut NewEntries) -> u64 {
        let mut frame_ids = Vec::new();
        for f in stack {
            let key = (f.name, f.path, f.rel_pc);
            if let Some(&id) = self.frames.get(&key) {
                frame_ids.push(id);
                continue;
            }
            let mapping = match self.mappings.get(&(f.path, f.build_id)) {
                Some(&m) => m,
                None => {
                    let build = self.string(interned_data_field::BUILD_IDS, f.build_id, new);
                    let parts: Vec<u64> = f
                        .path
                        .split('/')
                        .filter(|c| !c.is_empty())
                        .map(|c| self.string(interned_data_field::MAPPING_PATHS, c.as_bytes(), new))
                        .collect();
                    let m = self.next;
                    self.next += 1;
                    self.mappings.insert((f.path, f.build_id), m);
                    new.mappings.push((m, build, 0x1000, parts));
                    m
                }
            };
            let name = match f.name {
                Some(n) => self.string(interned_data_field::FUNCTION_NAMES, n.as_bytes(), new),
                None => 0,
            };
            let id = self.next;
            self.next += 1;
            self.frames.insert(key, id);
            new.frames.push((id, name, mapping, f.rel_pc));
            frame_ids.push(id);
        }
        if let Some(&c) = self.callstacks.get(&frame_ids) {
            return c;
        }
        let c = self.next;
        self.next += 1;
        self.callstacks.insert(frame_ids.clone(), c);
        new.callstacks.push((c, frame_ids));
        c
    }

    /// A sample of `pid`/`tid` at `ts` with `stack` (root first).
    pub fn sample(&mut self, t: &mut Trace, ts: u64, pid: u32, tid: u32, stack: &[Fr]) {
        let mut new = NewEntries::default();
        let callstack = self.intern(stack, &mut new);
        self.packet_with(t, ts, &new, |s| {
            s.set_cpu(1).set_pid(pid).set_tid(tid).set_cpu_mode_raw(2);
            s.set_timebase_count(ts).set_callstack_iid(callstack);
        });
    }

    /// A packet of this sequence (flagged as needing the state) with the
    /// interned entries of `new` and a `perf_sample` written by `f`.
    pub fn raw_sample(&mut self, t: &mut Trace, ts: u64, f: impl FnOnce(&mut PerfSample<'_>)) {
        self.packet_with(t, ts, &NewEntries::default(), f);
    }

    fn packet_with(
        &mut self,
        t: &mut Trace,
        ts: u64,
        new: &NewEntries,
        f: impl FnOnce(&mut PerfSample<'_>),
    ) {
        let seq = self.seq;
        t.packet(|p| {
            p.set_trusted_packet_sequence_id(seq);
            p.set_sequence_flags(NEEDS);
            p.set_timestamp(ts);
            {
                let mut i = p.message().begin_nested(packet_field::INTERNED_DATA);
                for (field, iid, s) in &new.strings {
                    InternedString::from_message(i.begin_nested(*field))
                        .set_iid(*iid)
                        .set_str(s);
                }
                for (iid, build, start, parts) in &new.mappings {
                    let mut m =
                        Mapping::from_message(i.begin_nested(interned_data_field::MAPPINGS));
                    m.set_iid(*iid)
                        .set_build_id(*build)
                        .set_start(*start)
                        .set_end(start + 0x10_0000);
                    for c in parts {
                        m.add_path_string_ids(*c);
                    }
                }
                for (iid, name, mapping, pc) in &new.frames {
                    let mut fr = Frame::from_message(i.begin_nested(interned_data_field::FRAMES));
                    fr.set_iid(*iid).set_mapping_id(*mapping).set_rel_pc(*pc);
                    if *name != 0 {
                        fr.set_function_name_id(*name);
                    }
                }
                for (iid, frames) in &new.callstacks {
                    let mut c =
                        Callstack::from_message(i.begin_nested(interned_data_field::CALLSTACKS));
                    c.set_iid(*iid);
                    for f in frames {
                        c.add_frame_ids(*f);
                    }
                }
            }
            let mut s =
                PerfSample::from_message(p.message().begin_nested(packet_field::PERF_SAMPLE));
            f(&mut s);
        });
    }
}
