//! Unit tests of the translation on events the fixtures lack and on
//! hostile formats.

use super::*;
use crate::ftrace::page::PageLayout;
use protozero::HeapWriter;
use zerotrace_protos::protos::FtraceEventBundleDecoder;

const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

fn format(name: &str, id: u32, fields: &str) -> EventFormat {
    EventFormat::parse(&format!(
        "name: {name}\nID: {id}\nformat:\n{COMMON}{fields}\nprint fmt: \"\"\n"
    ))
    .expect("format")
}

/// One page with these (id, payload) records at ts 100, 101, ...
fn page(records: &[Vec<u8>]) -> Vec<u8> {
    let mut data = Vec::new();
    for (i, p) in records.iter().enumerate() {
        let delta = u32::from(i > 0);
        data.extend_from_slice(&((p.len() / 4) as u32 | (delta << 5)).to_le_bytes());
        data.extend_from_slice(p);
    }
    let mut b = 100u64.to_le_bytes().to_vec();
    b.extend_from_slice(&(data.len() as u64).to_le_bytes());
    b.extend_from_slice(&data);
    b.resize(4096, 0);
    b
}

fn payload(id: u16, pid: i32, rest: &[u8]) -> Vec<u8> {
    let mut p = id.to_le_bytes().to_vec();
    p.extend_from_slice(&[0, 0]);
    p.extend_from_slice(&pid.to_le_bytes());
    p.extend_from_slice(rest);
    while p.len() % 4 != 0 {
        p.push(0);
    }
    p
}

/// The 64-bit page layout of 4 KiB sub-buffers for `table`'s events.
fn layout(table: &FormatTable) -> PageLayout {
    let header = crate::ftrace::HeaderPage::parse(
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n",
    )
    .expect("header");
    PageLayout::new(&header, 4096, table.common_type().expect("ct")).expect("l")
}

fn run(table: &FormatTable, records: &[Vec<u8>]) -> (Vec<u8>, Translator) {
    let layout = layout(table);
    let raw = page(records);
    let pages: Vec<Page<'_>> = layout.pages(&raw).map(|p| p.expect("page")).collect();
    let mut tr = Translator::new(table, Options::default()).expect("translator");
    let mut w = HeapWriter::new();
    assert_eq!(tr.write_bundle(&mut w.root(), 3, &pages), 1);
    let bytes = w.finish().expect("writes");
    let d = protozero::TypedDecoder::<4>::new(&bytes);
    let b = d
        .get(packet_field::FTRACE_EVENTS)
        .and_then(|f| f.as_bytes().ok())
        .expect("bundle")
        .to_vec();
    (b, tr)
}

#[test]
fn power_workqueue_and_generic_dev_t() {
    let mut t = FormatTable::new();
    t.insert(format(
        "cpu_frequency",
        10,
        "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n",
    ))
    .expect("insert");
    t.insert(format(
        "workqueue_execute_start",
        11,
        "\tfield:void * work;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\n",
    ))
    .expect("insert");
    t.insert(format(
        "block_thing",
        12,
        "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:int delta;\toffset:12;\tsize:4;\tsigned:1;\n",
    ))
    .expect("insert");
    let mut freq = 2_400_000u32.to_le_bytes().to_vec();
    freq.extend_from_slice(&1u32.to_le_bytes());
    let mut wq = 0xffff_0000_dead_0000u64.to_le_bytes().to_vec();
    wq.extend_from_slice(&0xffff_ffff_8100_0000u64.to_le_bytes());
    // dev 8:1 in the kernel's encoding (major << 20 | minor).
    let mut dev = ((8u32 << 20) | 1).to_le_bytes().to_vec();
    dev.extend_from_slice(&(-5i32).to_le_bytes());
    let (b, tr) = run(
        &t,
        &[
            payload(10, 7, &freq),
            payload(11, 8, &wq),
            payload(11, 8, &wq),
            payload(12, 9, &dev),
        ],
    );
    let d = FtraceEventBundleDecoder::new(&b);
    assert_eq!(d.cpu(), Some(3));
    let evs: Vec<_> = d.event().collect();
    assert_eq!(evs.len(), 4);
    let f = evs[0].cpu_frequency().expect("cpu_frequency");
    assert_eq!((f.state(), f.cpu_id()), (Some(2_400_000), Some(1)));
    assert_eq!(evs[0].pid(), Some(7));
    assert_eq!(evs[0].timestamp(), Some(100));
    // A code address becomes an interning index, a data pointer (`work`)
    // its keyed hash; the same address the same value.
    let w1 = evs[1].workqueue_execute_start().expect("wq");
    let w2 = evs[2].workqueue_execute_start().expect("wq");
    let work = tr.pointer_hash(0xffff_0000_dead_0000);
    assert_ne!(work, 0xffff_0000_dead_0000);
    assert_eq!((w1.work(), w1.function()), (Some(work), Some(1)));
    assert_eq!((w2.work(), w2.function()), (Some(work), Some(1)));
    assert_eq!(tr.kernel_addrs().get(&0xffff_ffff_8100_0000), Some(&1));
    assert_eq!(tr.kernel_addrs().len(), 1, "data pointers are not interned");
    // A generic dev_t is userspace's makedev(8, 1) = 0x801.
    let g = evs[3].generic().expect("generic");
    assert_eq!(g.event_name(), Some("block_thing"));
    let fields: Vec<_> = g.field().collect();
    assert_eq!(fields[0].name(), Some("dev"));
    assert_eq!(fields[0].uint_value(), Some(0x801));
    assert_eq!(fields[1].int_value(), Some(-5));
    assert_eq!(tr.stats().generic, 1);
    assert_eq!(tr.stats().typed, 3);
}

#[test]
fn short_records_and_unknown_ids_are_counted() {
    let mut t = FormatTable::new();
    t.insert(format(
        "cpu_idle",
        10,
        "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n",
    ))
    .expect("insert");
    // A cpu_idle record of 8 bytes (its format needs 16), and id 99.
    let (b, tr) = run(&t, &[payload(10, 1, &[]), payload(99, 1, &[1, 2, 3, 4])]);
    assert_eq!(FtraceEventBundleDecoder::new(&b).event().count(), 0);
    let s = tr.stats();
    assert_eq!((s.short_records, s.unknown_ids, s.typed), (1, 1, 0));
}

/// A record that runs past the page's commit: the rest of the page is
/// skipped, the bundle carries an `error` at the page's time with
/// upstream's status, and the translator lists the status for the end
/// stats.
#[test]
fn a_broken_page_is_an_error_of_the_bundle() {
    let mut table = FormatTable::new();
    table
        .insert(format(
            "x",
            300,
            "\tfield:int v;\toffset:8;\tsize:4;\tsigned:1;\n",
        ))
        .expect("insert");
    let good = payload(300, 7, &5i32.to_le_bytes());
    let mut raw = page(&[good.clone(), good]);
    // The second record's length word claims 28 words: past the commit.
    let second = 16 + 4 + 12;
    raw[second..second + 4].copy_from_slice(&(28u32 | (1 << 5)).to_le_bytes());
    let layout = layout(&table);
    let pages: Vec<Page<'_>> = layout.pages(&raw).map(|p| p.expect("page")).collect();
    let mut tr = Translator::new(&table, Options::default()).expect("translator");
    let mut w = HeapWriter::new();
    tr.write_bundle(&mut w.root(), 0, &pages);
    let bytes = w.finish().expect("writes");
    let body = protozero::Decoder::new(&bytes)
        .find_last(packet_field::FTRACE_EVENTS)
        .expect("bundle")
        .as_bytes()
        .expect("bytes")
        .to_vec();
    let b = FtraceEventBundleDecoder::new(&body);
    assert_eq!(b.event().count(), 1, "the record before the break");
    let errors: Vec<_> = b.error().collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].timestamp(), Some(100));
    assert_eq!(
        errors[0].status(),
        Some(FtraceParseStatus::FtraceStatusAbiEndOverflow)
    );
    assert_eq!(
        tr.parse_errors(),
        [FtraceParseStatus::FtraceStatusAbiEndOverflow]
    );
    // A page whose header cannot be parsed is noted too.
    tr.note_page_error(&PageError::MissedCountPastEnd);
    assert_eq!(
        tr.parse_errors(),
        [
            FtraceParseStatus::FtraceStatusAbiInvalidPageHeader,
            FtraceParseStatus::FtraceStatusAbiEndOverflow
        ]
    );
}

/// Issue 47, "no raw kernel address in a trace": code addresses the
/// kernel declares `unsigned long` or as a function-pointer typedef (the
/// print's `ip`, kmem's `call_site`, the function tracer's `ip` and
/// `parent_ip`, funcgraph's `func`, xfs's `caller_ip`) are written as
/// interning indices like `void *` ones (`sched_blocked_reason.caller`),
/// never as the address; a field of the same name that is no address
/// (kvm's `unsigned int function`) keeps its value.
#[test]
fn code_addresses_are_written_as_indices_never_raw() {
    let mut t = FormatTable::new();
    let fields = [
        (
            "print",
            20,
            "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n",
        ),
        (
            "kfree",
            21,
            "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n",
        ),
        (
            "function",
            22,
            "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:unsigned long parent_ip;\toffset:16;\tsize:8;\tsigned:0;\n",
        ),
        (
            "funcgraph_entry",
            23,
            "\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:int depth;\toffset:16;\tsize:4;\tsigned:1;\n",
        ),
        (
            "sched_blocked_reason",
            24,
            "\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:void * caller;\toffset:16;\tsize:8;\tsigned:0;\n",
        ),
        (
            "initcall_finish",
            25,
            "\tfield:initcall_t func;\toffset:8;\tsize:8;\tsigned:0;\n",
        ),
        (
            "kvm_cpuid",
            26,
            "\tfield:unsigned int function;\toffset:8;\tsize:4;\tsigned:0;\n",
        ),
    ];
    for (name, id, f) in fields {
        t.insert(format(name, id, f)).expect("insert");
    }
    let a: [u64; 6] = [
        0xffff_ffff_8112_3456,
        0xffff_ffff_8123_4567,
        0xffff_ffff_8134_5678,
        0xffff_ffff_8145_6789,
        0xffff_ffff_8156_789a,
        0xffff_ffff_8167_89ab,
    ];
    let words = |w: &[u64]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let mut print = words(&a[..1]);
    print.extend_from_slice(b"B|1|x\0");
    let mut graph = words(&a[4..5]);
    graph.extend_from_slice(&3i32.to_le_bytes());
    let mut blocked = 9i32.to_le_bytes().to_vec();
    blocked.extend_from_slice(&[0; 4]);
    blocked.extend(words(&a[1..2]));
    let (b, tr) = run(
        &t,
        &[
            payload(20, 7, &print),
            payload(21, 7, &words(&a[1..2])),
            payload(22, 7, &words(&a[2..4])),
            payload(23, 7, &graph),
            payload(24, 7, &blocked),
            payload(25, 7, &words(&a[5..6])),
            payload(26, 7, &7u32.to_le_bytes()),
        ],
    );
    let varint = |mut v: u64| {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    };
    for addr in a {
        let has = |n: &[u8]| b.windows(n.len()).any(|w| w == n);
        assert!(!has(&addr.to_le_bytes()), "{addr:#x} as 8 bytes");
        assert!(!has(&varint(addr)), "{addr:#x} as a varint");
        assert!(tr.kernel_addrs().contains_key(&addr), "{addr:#x} interned");
    }
    let d = FtraceEventBundleDecoder::new(&b);
    let evs: Vec<_> = d.event().collect();
    assert_eq!(evs.len(), 7);
    let ip = evs[0].print().expect("print").ip();
    assert_eq!(ip, tr.kernel_addrs().get(&a[0]).map(|&i| u64::from(i)));
    let generic = |i: usize| -> Vec<(String, Option<u64>)> {
        let g = evs[i].generic().expect("generic");
        g.field()
            .map(|f| (f.name().unwrap_or("").to_owned(), f.uint_value()))
            .collect()
    };
    let idx = |addr: u64| tr.kernel_addrs().get(&addr).map(|&i| u64::from(i));
    // The same address in kfree and sched_blocked_reason: one index.
    assert_eq!(generic(1), [("call_site".to_owned(), idx(a[1]))]);
    assert_eq!(generic(4)[1], ("caller".to_owned(), idx(a[1])));
    assert_eq!(
        generic(2),
        [
            ("ip".to_owned(), idx(a[2])),
            ("parent_ip".to_owned(), idx(a[3]))
        ]
    );
    assert_eq!(generic(3)[0], ("func".to_owned(), idx(a[4])));
    assert_eq!(generic(5), [("func".to_owned(), idx(a[5]))]);
    assert_eq!(generic(6), [("function".to_owned(), Some(7))]);
}

#[path = "translate_pointer_tests.rs"]
mod pointers;
