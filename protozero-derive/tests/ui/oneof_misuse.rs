use protozero::ProtoWrite;

#[derive(ProtoWrite)]
enum Choice {
    #[proto(tag = 1)]
    Text(String),
    #[proto(tag = 2)]
    Num(u64),
}

#[derive(ProtoWrite)]
struct NotOption {
    #[proto(oneof)]
    choice: Choice,
}

#[derive(ProtoWrite)]
struct WithTag {
    #[proto(oneof, tag = 3)]
    choice: Option<Choice>,
}

#[derive(ProtoWrite)]
enum Mixed {
    #[proto(tag = 1)]
    Text(String),
    Nothing,
}

#[derive(ProtoWrite)]
enum RepeatedMember {
    #[proto(tag = 1)]
    Many(Vec<u32>),
}

fn main() {}
