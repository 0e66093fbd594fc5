//! `protozero::Repeated<'a, T>` fields: decoding only records where the field
//! starts; iterating decodes elements in wire order, across merged buffers,
//! and reports element-level errors as items.

use protozero::{HeapWriter, ProtoRead, ProtoWrite, Repeated};

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq, Clone)]
struct Item<'a> {
    #[proto(tag = 1)]
    name: &'a str,
    #[proto(tag = 2)]
    size: u64,
}

/// The eager (writable) form.
#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct ListEager<'a> {
    #[proto(tag = 1)]
    items: Vec<Item<'a>>,
    #[proto(tag = 2, packed, sint)]
    deltas: Vec<i64>,
    #[proto(tag = 3)]
    tags: Vec<&'a str>,
    #[proto(tag = 4)]
    title: &'a str,
}

/// The same schema, read lazily.
#[derive(ProtoRead, Debug, PartialEq)]
struct ListLazy<'a> {
    #[proto(tag = 1)]
    items: Repeated<'a, Item<'a>>,
    #[proto(tag = 2, sint)]
    deltas: Repeated<'a, i64>,
    #[proto(tag = 3)]
    tags: Repeated<'a, &'a str>,
    #[proto(tag = 4)]
    title: &'a str,
}

fn eager() -> ListEager<'static> {
    ListEager {
        items: vec![Item { name: "a", size: 1 }, Item { name: "b", size: 2 }],
        deltas: vec![-1, 0, i64::MIN, i64::MAX],
        tags: vec!["x", "y"],
        title: "list",
    }
}

#[test]
fn lazy_matches_eager() {
    let bytes = eager().write_to_vec().unwrap();
    let lazy = ListLazy::decode(&bytes).unwrap();
    let want = eager();
    assert_eq!(lazy.items.to_vec().unwrap(), want.items);
    assert_eq!(lazy.deltas.to_vec().unwrap(), want.deltas);
    assert_eq!(lazy.tags.to_vec().unwrap(), want.tags);
    assert_eq!(lazy.title, "list");
    // Iteration is repeatable and borrows from the input.
    let first = lazy.items.iter().next().unwrap().unwrap();
    assert!(bytes.as_ptr_range().contains(&first.name.as_ptr()));
    assert_eq!(lazy.items.iter().count(), 2);
}

#[test]
fn absent_lazy_field_is_empty() {
    let lazy = ListLazy::decode(&[0x22, 1, b't']).unwrap();
    assert!(lazy.items.is_absent());
    assert_eq!(lazy.items.iter().count(), 0);
    assert_eq!(lazy.title, "t");
}

#[test]
fn element_errors_surface_when_iterating() {
    // tags: "ok", then invalid UTF-8, then "late".
    let bytes = [
        0x1A, 2, b'o', b'k', 0x1A, 1, 0xFF, 0x1A, 4, b'l', b'a', b't', b'e',
    ];
    let lazy = ListLazy::decode(&bytes).expect("framing is valid");
    let got: Vec<_> = lazy.tags.iter().collect();
    assert_eq!(got.len(), 2, "iteration stops after the first error");
    assert_eq!(got[0], Ok("ok"));
    let e = got[1].unwrap_err();
    assert_eq!(
        e.path().map(|s| (s.name, s.id)).collect::<Vec<_>>(),
        [("tags", 3)]
    );
    // The eager form reports the same problem from decode.
    assert!(ListEager::decode(&bytes).is_err());
}

#[test]
fn wire_type_errors_surface_at_decode() {
    // items (1) as a varint.
    let e = ListLazy::decode(&[0x08, 1]).unwrap_err();
    assert_eq!(e.path().next().map(|s| s.id), Some(1));
}

#[derive(ProtoRead, Debug)]
struct Holder<'a> {
    #[proto(tag = 1)]
    list: Option<ListLazy<'a>>,
}

#[test]
fn merged_occurrences_iterate_in_order() {
    // Holder.list appears twice; protobuf merges them, so the lazy fields
    // must span both buffers.
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        ListEager {
            items: vec![Item { name: "a", size: 1 }],
            ..empty()
        }
        .write_nested(&mut root, 1);
        root.append_uint32(9, 9); // unknown field between the pieces
        ListEager {
            items: vec![Item { name: "b", size: 2 }, Item { name: "c", size: 3 }],
            deltas: vec![4],
            ..empty()
        }
        .write_nested(&mut root, 1);
    }
    let bytes = w.finish().unwrap();
    let holder = Holder::decode(&bytes).unwrap();
    let list = holder.list.unwrap();
    let names: Vec<_> = list.items.iter().map(|i| i.unwrap().name).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(list.deltas.to_vec().unwrap(), [4]);
}

fn empty() -> ListEager<'static> {
    ListEager {
        items: vec![],
        deltas: vec![],
        tags: vec![],
        title: "",
    }
}
