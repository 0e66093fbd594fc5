use protozero::{ProtoRead, ProtoWrite, Repeated};

#[derive(ProtoWrite)]
struct LazyWrite<'a> {
    #[proto(tag = 1)]
    values: Repeated<'a, u32>,
}

#[derive(ProtoRead)]
struct SliceRead<'a> {
    #[proto(tag = 1)]
    values: &'a [u32],
}

#[derive(ProtoRead)]
struct TwoLifetimes<'a, 'b> {
    #[proto(tag = 1)]
    a: &'a str,
    #[proto(tag = 2)]
    b: &'b str,
}

fn main() {}
