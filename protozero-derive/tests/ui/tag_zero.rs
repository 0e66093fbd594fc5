use protozero::ProtoWrite;

#[derive(ProtoWrite)]
struct Packet {
    #[proto(tag = 0)]
    size: u64,
}

fn main() {}
