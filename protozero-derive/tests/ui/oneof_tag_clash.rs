use protozero::ProtoWrite;

#[derive(ProtoWrite)]
enum Choice {
    #[proto(tag = 1)]
    Text(String),
    #[proto(tag = 2)]
    Num(u64),
}

#[derive(ProtoWrite)]
struct Packet {
    #[proto(tag = 2)]
    size: u64,
    #[proto(oneof)]
    choice: Option<Choice>,
}

#[derive(ProtoWrite)]
enum Other {
    #[proto(tag = 5)]
    Flag(bool),
    #[proto(tag = 1)]
    Again(String),
}

#[derive(ProtoWrite)]
struct TwoOneofs {
    #[proto(oneof)]
    first: Option<Choice>,
    #[proto(oneof)]
    second: Option<Other>,
}

fn main() {}
