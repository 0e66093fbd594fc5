use protozero::ProtoWrite;

#[derive(ProtoWrite)]
struct Packet {
    #[proto(tag = 1)]
    size: u64,
    name: String,
}

fn main() {}
