use protozero::{ProtoRead, ProtoWrite};

struct Plain {
    v: u32,
}

#[derive(ProtoWrite)]
struct Writes {
    #[proto(tag = 1)]
    plain: Plain,
}

#[derive(ProtoRead)]
struct Reads {
    #[proto(tag = 1)]
    plain: Option<Plain>,
}

fn main() {}
