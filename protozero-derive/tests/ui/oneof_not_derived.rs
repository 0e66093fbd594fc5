use protozero::ProtoWrite;

#[derive(ProtoWrite)]
enum Level {
    Info = 0,
    Warn = 1,
}

#[derive(ProtoWrite)]
enum Choice {
    #[proto(tag = 1)]
    Text(String),
}

#[derive(ProtoWrite)]
struct Packet {
    /// A C-like enum is not a oneof.
    #[proto(oneof)]
    level: Option<Level>,
    /// A oneof enum used like a field.
    #[proto(tag = 2)]
    choice: Option<Choice>,
}

fn main() {}
