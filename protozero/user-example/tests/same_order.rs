//! The example's order reads the same through the generated decoder and
//! through prost, from each of the three writers.

use prost::Message as _;
use protozero::{HeapBuffer, HeapWriter, SliceWriter, Writer};
use protozero_user_example::shop::{OrderDecoder, order};
use protozero_user_example::{prost_shop, write_order};

fn heap() -> Vec<u8> {
    let mut w = HeapWriter::new();
    write_order(w.root());
    w.finish().expect("heap")
}

#[test]
fn three_writers_give_the_same_bytes() {
    let bytes = heap();
    let mut buf = [0u8; 256];
    let mut w = SliceWriter::new(&mut buf);
    write_order(w.root());
    assert_eq!(&w.finish().expect("slice")[..], &bytes[..]);
    let expected = prost_shop::Order::decode(&bytes[..]).expect("prost");
    for chunk in [1, 3, 16, 4096] {
        let mut w = Writer::with_delegate(HeapBuffer::with_slice_sizes(chunk, chunk));
        write_order(w.root());
        let chunked = w.finish().expect("chunked");
        // Lengths of messages that span chunks keep their 4 reserved bytes.
        assert!(chunked.len() >= bytes.len());
        let d = OrderDecoder::new(&chunked);
        assert_eq!(d.decode_error(), None, "chunks of {chunk}");
        assert_eq!(d.lines().count(), 2, "chunks of {chunk}");
        let decoded = prost_shop::Order::decode(&chunked[..]).expect("prost");
        assert_eq!(decoded, expected, "chunks of {chunk}");
    }
    // Too small a slice is an error, not a panic or a truncated message.
    let mut small = [0u8; 8];
    let mut w = SliceWriter::new(&mut small);
    write_order(w.root());
    assert!(w.finish().is_err());
}

#[test]
fn decoder_and_prost_agree() {
    let bytes = heap();
    let d = OrderDecoder::new(&bytes);
    let p = prost_shop::Order::decode(&bytes[..]).expect("prost");
    assert_eq!(d.decode_error(), None);
    assert_eq!(d.id(), Some(p.id));
    assert_eq!(d.id(), Some(42));
    assert_eq!(d.status(), Some(order::Status::Placed));
    assert_eq!(d.status_raw(), Some(p.status));
    let lines: Vec<_> = d
        .lines()
        .map(|l| (l.sku().map(str::to_owned), l.quantity(), l.price_cents()))
        .collect();
    let prost_lines: Vec<_> = p
        .lines
        .iter()
        .map(|l| (Some(l.sku.clone()), Some(l.quantity), Some(l.price_cents)))
        .collect();
    assert_eq!(lines, prost_lines);
    assert_eq!(lines.len(), 2);
    let notes: Vec<_> = d.notes().map(|n| (n.key(), n.value())).collect();
    assert_eq!(notes, [(Some("gift"), Some("yes"))]);
    assert_eq!(p.notes.get("gift").map(String::as_str), Some("yes"));
    assert!(matches!(
        d.which_payment(),
        Some(order::Payment::CardToken("tok_123"))
    ));
    assert_eq!(
        p.payment,
        Some(prost_shop::order::Payment::CardToken("tok_123".into()))
    );
    assert_eq!(d.tags().collect::<Vec<_>>(), p.tags);
    assert_eq!(p.tags, [7, 9]);
    // prost's own encoding reads back through the generated decoder.
    let reencoded = p.encode_to_vec();
    let d2 = OrderDecoder::new(&reencoded);
    assert_eq!(d2.lines().count(), 2);
    assert_eq!(d2.card_token(), Some("tok_123"));
}
