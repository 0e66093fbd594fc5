//! Proto2 groups: `Message::begin_group` writes start/end-group tags around
//! the child's fields, group-aware decoders read them back, plain decoders
//! keep rejecting them, and hostile group nesting never panics.

use proptest::prelude::*;
use protozero::{DecodeError, Decoder, FieldValue, HeapWriter, TypedDecoder};

#[test]
fn groups_are_written_with_start_and_end_tags() {
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        root.append_uint32(1, 5);
        let mut g = root.begin_group(2);
        g.append_uint32(3, 7);
        {
            let mut nested = g.begin_nested(4);
            nested.append_uint32(1, 1);
        }
        let mut inner = g.begin_group(5);
        inner.append_bool(6, true);
        assert_eq!(inner.finalize(), 0);
        drop(g);
        root.append_uint32(7, 9);
    }
    let bytes = w.finish().unwrap();
    assert_eq!(
        bytes,
        [
            0x08, 5,    // 1: 5
            0x13, // 2: start group
            0x18, 7, // 3: 7
            0x22, 2, 0x08, 1, // 4: {1: 1}
            0x2B, 0x30, 1, 0x2C, // 5: group {6: true}
            0x14, // 2: end group
            0x38, 9, // 7: 9
        ]
    );
    let d = TypedDecoder::<'_, 8>::with_groups(&bytes);
    assert_eq!(d.error(), None);
    let g = d.get(2).unwrap().as_group().unwrap();
    let inner: Vec<_> = Decoder::new(g)
        .accept_groups()
        .map(Result::unwrap)
        .collect();
    assert_eq!(inner.len(), 3);
    assert_eq!(inner[0].as_u32(), Ok(7));
    assert_eq!(inner[2].value, FieldValue::Group(&[0x30, 1]));
    assert_eq!(d.get(7).unwrap().as_u32(), Ok(9));
}

proptest! {
    /// Arbitrary bytes through a group-aware decoder: no panic, and
    /// iteration ends (each step consumes input or stops).
    #[test]
    fn hostile_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut n = 0usize;
        for f in Decoder::new(&bytes).accept_groups() {
            n += 1;
            prop_assert!(n <= bytes.len() + 1);
            if let Ok(f) = f {
                if let FieldValue::Group(g) = f.value {
                    prop_assert!(g.len() < bytes.len());
                    let _ = Decoder::new(g).accept_groups().count();
                }
            }
        }
        let _ = TypedDecoder::<'_, 16>::with_groups(&bytes);
    }

    /// Groups nested past the bound stop with GroupTooDeep, not recursion.
    #[test]
    fn deep_nesting_is_refused(depth in 65usize..5000) {
        let mut bytes = vec![0x0B; depth];
        bytes.extend(std::iter::repeat_n(0x0C, depth));
        let first = Decoder::new(&bytes).accept_groups().next();
        prop_assert_eq!(first, Some(Err(DecodeError::GroupTooDeep { id: 1 })));
    }
}
