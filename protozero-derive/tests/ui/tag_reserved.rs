use protozero::ProtoWrite;

#[derive(ProtoWrite)]
struct Packet {
    #[proto(tag = 19001)]
    size: u64,
}

fn main() {}
