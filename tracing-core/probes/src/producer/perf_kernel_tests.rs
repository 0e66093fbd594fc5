//! Issue 47, "no raw kernel address in a trace": samples with kernel
//! frames fed to a `linux.perf` instance (fabricated records, a fake
//! kallsyms table), and the written packets searched for every sampled
//! kernel IP, as the eight bytes a fixed64 would hold and as the varint a
//! `rel_pc` would be; the interned kernel frames read back.

use std::collections::HashMap;

use super::*;
use zerotrace_protos::protos::{FrameDecoder, InternedStringDecoder, MappingDecoder};
use zerotrace_protos::upstream_tables::interned_data_field;

const KALLSYMS: &str = "\
ffffffff81000000 T _text
ffffffff81001000 T do_syscall_64
ffffffff81002000 t ksys_read
ffffffff81400000 T _etext
";

/// Two IPs in `do_syscall_64`, one in `ksys_read`, one below every
/// symbol and one past the end of text (neither named).
const IPS: [u64; 5] = [
    0xffff_ffff_8100_2040,
    0xffff_ffff_8100_1010,
    0xffff_ffff_8100_1f08,
    0xffff_ffff_8000_0123,
    0xffff_ffff_8140_0777,
];

/// A kernel-mode sample of `pid` whose callchain is `ips` (leaf first),
/// for a kernel-frames-only layout.
fn kernel_sample(layout: &SampleLayout, pid: u32, ips: &[u64]) -> Vec<u8> {
    assert_eq!(layout.sample_type & sample::REGS_USER, 0);
    let mut b = Vec::new();
    b.extend(pid.to_ne_bytes());
    b.extend(pid.to_ne_bytes());
    b.extend(words(&[2_000, 1, 5]));
    let mut chain = vec![crate::perf::abi::context::KERNEL];
    chain.extend(ips);
    b.extend(words(&[chain.len() as u64]));
    b.extend(words(&chain));
    rec(record::SAMPLE, KERNEL, &b)
}

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The interned frames (iid → function name, rel_pc, mapping) and
/// mappings (iid → start, end, load bias) of `packets`.
#[derive(Debug, Default)]
struct Interned {
    names: HashMap<u64, String>,
    frames: HashMap<u64, (u64, u64, u64)>,
    mappings: HashMap<u64, (u64, u64, u64)>,
}

fn interned(packets: &[Vec<u8>]) -> Interned {
    let mut out = Interned::default();
    for p in packets {
        for f in Decoder::new(p).filter_map(Result::ok) {
            if f.id != packet_field::INTERNED_DATA {
                continue;
            }
            let data = f.as_bytes().unwrap();
            for g in Decoder::new(data).filter_map(Result::ok) {
                let b = g.as_bytes().unwrap();
                match g.id {
                    interned_data_field::FUNCTION_NAMES => {
                        let s = InternedStringDecoder::new(b);
                        out.names.insert(
                            s.iid().unwrap(),
                            String::from_utf8(s.str().unwrap_or_default().to_vec()).unwrap(),
                        );
                    }
                    interned_data_field::FRAMES => {
                        let fr = FrameDecoder::new(b);
                        out.frames.insert(
                            fr.iid().unwrap(),
                            (
                                fr.function_name_id().unwrap_or(0),
                                fr.rel_pc().unwrap_or(0),
                                fr.mapping_id().unwrap_or(0),
                            ),
                        );
                    }
                    interned_data_field::MAPPINGS => {
                        let m = MappingDecoder::new(b);
                        out.mappings.insert(
                            m.iid().unwrap(),
                            (
                                m.start().unwrap_or(0),
                                m.end().unwrap_or(0),
                                m.load_bias().unwrap_or(0),
                            ),
                        );
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

#[test]
fn no_sampled_kernel_ip_is_written_and_frames_are_by_function() {
    let o = config(|c| {
        let mut cs = c.begin_callstack_sampling();
        cs.set_kernel_frames(true)
            .set_user_frames(UnwindMode::UnwindSkip);
    });
    let root = fake_proc(&[(7, b"/bin/app\0")]);
    let (mut p, _) = probe(o, &root);
    p.kernel_symbols = Some(KernelSymbols::parse(KALLSYMS).unwrap());
    let l = p.layout;
    let mut sink = BufferSink::default();
    p.write_defaults(&mut sink);
    let bytes: Vec<u8> = [kernel_sample(&l, 7, &IPS), kernel_sample(&l, 7, &IPS[1..3])].concat();
    p.handle_bytes(0, &bytes, &mut sink, 5_000, &mut 0);
    assert_eq!(p.stats.samples, 2);

    let all: Vec<u8> = sink.packets.concat();
    for ip in IPS {
        assert!(
            !contains(&all, &ip.to_le_bytes()),
            "{ip:#x} is in the packets as 8 bytes"
        );
        assert!(
            !contains(&all, &varint(ip)),
            "{ip:#x} is in the packets as a varint"
        );
        // Nor the kernel's page of it (a mapping's start or end).
        let page = ip & !0xfff;
        assert!(!contains(&all, &varint(page)), "{page:#x} as a varint");
    }

    let i = interned(&sink.packets);
    // Every frame but the fake unwinder's user frame ("leaf") is a kernel one.
    let kernel_frames: Vec<(&str, u64, u64)> = i
        .frames
        .values()
        .map(|(n, pc, m)| (i.names[n].as_str(), *pc, *m))
        .filter(|(n, _, _)| *n != "leaf")
        .collect();
    let mut names: Vec<&str> = kernel_frames.iter().map(|f| f.0).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["", "do_syscall_64", "ksys_read"],
        "one frame per function, one unnamed: {kernel_frames:?}"
    );
    for (name, pc, mapping) in &kernel_frames {
        assert_eq!(*pc, 0, "{name}: kernel frames have rel_pc 0");
        assert_eq!(
            i.mappings[mapping],
            (0, 0, 0),
            "{name}: the kernel mapping has no range or bias"
        );
    }
}
