//! A protozero user's own schema, end to end: `build.rs` turns
//! `proto/shop/order.proto` into writers and decoders with
//! `protozero_codegen::Config`; `main.rs` writes an order into a `Vec`, a
//! fixed slice and a chunked stream, reads it back with the generated
//! decoder, and reads the same bytes with prost.

/// The code protozero-codegen generated from `proto/shop/order.proto`
/// (package `shop`: the writer `Order`, the decoder `OrderDecoder`, ...).
mod generated {
    include!(concat!(env!("OUT_DIR"), "/protozero/mod.rs"));
}
pub use generated::shop;

/// prost's types for the same file, to show the bytes are ordinary protobuf.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod prost_shop {
    include!(concat!(env!("OUT_DIR"), "/prost/shop.rs"));
}

use protozero::Message;
use shop::{Order, order};

/// Writes the example order into `root` (a writer's root message).
pub fn write_order(root: Message<'_>) {
    let mut o = Order::from_message(root);
    o.set_id(42).set_status(order::Status::Placed);
    o.add_lines()
        .set_sku("tea-1kg")
        .set_quantity(2)
        .set_price_cents(1_250);
    o.add_lines()
        .set_sku("mug")
        .set_quantity(1)
        .set_price_cents(-300);
    o.add_notes().set_key("gift").set_value("yes");
    o.set_card_token("tok_123");
    o.set_tags([7, 9]);
}
