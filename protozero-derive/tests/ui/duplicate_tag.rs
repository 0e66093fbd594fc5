use protozero::ProtoWrite;

#[derive(ProtoWrite)]
struct Packet<'a> {
    #[proto(tag = 1)]
    name: &'a str,
    #[proto(tag = 2)]
    size: u64,
    #[proto(tag = 1)]
    label: &'a str,
}

fn main() {}
