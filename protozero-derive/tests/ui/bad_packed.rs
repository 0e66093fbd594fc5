use protozero::ProtoWrite;

#[derive(ProtoWrite)]
struct Single {
    #[proto(tag = 1, packed)]
    count: u32,
}

#[derive(ProtoWrite)]
struct Strings {
    #[proto(tag = 1, packed)]
    names: Vec<String>,
}

#[derive(ProtoWrite)]
struct Inner {
    #[proto(tag = 1)]
    v: u32,
}

#[derive(ProtoWrite)]
struct Messages {
    #[proto(tag = 1, packed)]
    inner: Vec<Inner>,
}

fn main() {}
