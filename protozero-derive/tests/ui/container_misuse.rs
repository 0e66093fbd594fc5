use protozero::ProtoWrite;

#[derive(ProtoWrite)]
struct Generic<T> {
    #[proto(tag = 1)]
    value: T,
}

#[derive(ProtoWrite)]
struct UnknownOption {
    #[proto(tag = 1, zigzag)]
    value: i32,
}

#[derive(ProtoWrite)]
enum Empty {}

#[derive(ProtoWrite)]
enum TooBig {
    Small = 0,
    Big = 4_000_000_000,
}

fn main() {}
