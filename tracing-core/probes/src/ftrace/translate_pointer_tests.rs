//! Issue 47, "no raw kernel address in a trace", for kernel data
//! pointers: kmalloc's and kfree's `void *ptr`, a `struct page *`, an
//! `skbaddr` declared `unsigned long` are written as the instance's keyed
//! hash of the pointer: the packets are searched for every pointer (as
//! eight bytes and as a varint), an allocation and its free carry equal
//! values, and another instance (another key) writes other values.

use super::*;

#[test]
fn data_pointers_are_written_as_keyed_hashes_never_raw() {
    let mut t = FormatTable::new();
    let fields = [
        (
            "kmalloc",
            30,
            "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n\
\tfield:size_t bytes_req;\toffset:24;\tsize:8;\tsigned:0;\n",
        ),
        (
            "kfree",
            31,
            "\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n",
        ),
        (
            "mm_page_free_batched",
            32,
            "\tfield:struct page * page;\toffset:8;\tsize:8;\tsigned:0;\n",
        ),
        (
            "net_thing",
            33,
            "\tfield:unsigned long skbaddr;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:unsigned long len;\toffset:16;\tsize:8;\tsigned:0;\n",
        ),
    ];
    for (name, id, f) in fields {
        t.insert(format(name, id, f)).expect("insert");
    }
    let site = 0xffff_ffff_8111_2222u64;
    let heap = 0xffff_8880_0abc_d100u64;
    let page_ptr = 0xffff_ea00_0123_4540u64;
    let skb = 0xffff_8880_7654_3200u64;
    let words = |w: &[u64]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let records = [
        payload(30, 7, &words(&[site, heap, 96])),
        payload(31, 7, &words(&[site, heap])),
        payload(32, 7, &words(&[page_ptr])),
        payload(33, 7, &words(&[skb, 1500])),
        payload(31, 7, &words(&[site, 0])),
    ];
    let (b, tr) = run(&t, &records);
    let varint = |mut v: u64| {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    };
    let has = |n: &[u8]| b.windows(n.len()).any(|w| w == n);
    for p in [heap, page_ptr, skb] {
        assert!(!has(&p.to_le_bytes()), "{p:#x} as 8 bytes");
        assert!(!has(&varint(p)), "{p:#x} as a varint");
        assert!(!tr.kernel_addrs().contains_key(&p), "{p:#x} is no symbol");
    }
    let d = FtraceEventBundleDecoder::new(&b);
    let evs: Vec<_> = d.event().collect();
    let fields = |i: usize| -> Vec<(String, Option<u64>)> {
        evs[i]
            .generic()
            .expect("generic")
            .field()
            .map(|f| (f.name().unwrap_or("").to_owned(), f.uint_value()))
            .collect()
    };
    let h = |p| Some(tr.pointer_hash(p));
    // The allocation and its free pair up; a NULL free stays 0.
    assert_eq!(fields(0)[1], ("ptr".to_owned(), h(heap)));
    assert_eq!(fields(1)[1], ("ptr".to_owned(), h(heap)));
    assert_eq!(fields(0)[2], ("bytes_req".to_owned(), Some(96)));
    assert_eq!(fields(2), [("page".to_owned(), h(page_ptr))]);
    assert_eq!(
        fields(3),
        [
            ("skbaddr".to_owned(), h(skb)),
            ("len".to_owned(), Some(1500))
        ]
    );
    assert_eq!(fields(4)[1], ("ptr".to_owned(), Some(0)));
    // Another instance, another key: nothing links the two sessions.
    let (_, other) = run(&t, &records);
    assert_ne!(other.pointer_hash(heap), tr.pointer_hash(heap));
    assert!(holds_data_pointer(&t.get(30).expect("kmalloc").fields[1]));
    assert!(!holds_data_pointer(&t.get(30).expect("kmalloc").fields[0]));
}
