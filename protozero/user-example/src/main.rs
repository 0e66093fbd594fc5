//! Writes an order three ways, reads it back with the generated decoder and
//! with prost: `cargo run -p protozero-user-example`.

use prost::Message as _;
use protozero::{HeapBuffer, HeapWriter, SliceWriter, Writer};
use protozero_user_example::shop::OrderDecoder;
use protozero_user_example::{prost_shop, write_order};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. Into a growable buffer, finished as a Vec.
    let mut w = HeapWriter::new();
    write_order(w.root());
    let bytes = w.finish()?;

    // 2. Into a fixed slice (no allocation; an error if it does not fit).
    let mut buf = [0u8; 256];
    let mut w = SliceWriter::new(&mut buf);
    write_order(w.root());
    let in_slice = w.finish()?;
    assert_eq!(&in_slice[..], &bytes[..]);

    // 3. Into a chunked stream: 16-byte chunks, lengths backfilled across
    // them. A length whose message spans chunks keeps its 4 reserved bytes
    // (a non-minimal varint, as Perfetto's ProtoZero writes), so the bytes
    // differ while the message is the same.
    let mut w = Writer::with_delegate(HeapBuffer::with_slice_sizes(16, 16));
    write_order(w.root());
    let chunked = w.finish()?;
    assert_eq!(
        prost_shop::Order::decode(&chunked[..])?,
        prost_shop::Order::decode(&bytes[..])?
    );

    // Read it back, zero-copy.
    let order = OrderDecoder::new(&bytes);
    println!("order {:?}, status {:?}", order.id(), order.status());
    for line in order.lines() {
        println!(
            "  {:?} x{:?} at {:?}",
            line.sku(),
            line.quantity(),
            line.price_cents()
        );
    }
    for note in order.notes() {
        println!("  note {:?} = {:?}", note.key(), note.value());
    }
    println!(
        "  payment {:?}, tags {:?}",
        order.which_payment(),
        order.tags().collect::<Vec<_>>()
    );

    // The bytes are ordinary protobuf: prost reads them too.
    let owned = prost_shop::Order::decode(&bytes[..])?;
    println!("prost: {owned:?}");
    Ok(())
}
