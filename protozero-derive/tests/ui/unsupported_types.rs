use std::collections::HashMap;

use protozero::ProtoWrite;

#[derive(ProtoWrite)]
struct Small {
    #[proto(tag = 1)]
    port: u16,
}

#[derive(ProtoWrite)]
struct Pair {
    #[proto(tag = 1)]
    pair: (u32, u32),
}

#[derive(ProtoWrite)]
struct Map {
    #[proto(tag = 1)]
    map: HashMap<String, u32>,
}

#[derive(ProtoWrite)]
struct Nested {
    #[proto(tag = 1)]
    grid: Vec<Vec<u32>>,
}

fn main() {}
