use protozero::ProtoRead;

#[derive(ProtoRead)]
struct Packet {
    #[proto(tag = 536870912)]
    size: u64,
}

fn main() {}
