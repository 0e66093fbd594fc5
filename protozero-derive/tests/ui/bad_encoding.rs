use protozero::ProtoWrite;

#[derive(ProtoWrite)]
struct Unsigned {
    #[proto(tag = 1, sint)]
    count: u32,
}

#[derive(ProtoWrite)]
struct Float {
    #[proto(tag = 1, fixed)]
    ratio: f64,
}

#[derive(ProtoWrite)]
struct Both {
    #[proto(tag = 1, sint, fixed)]
    delta: i64,
}

fn main() {}
