// A message cannot outlive the writer it writes into.
fn leak() -> protozero::Message<'static> {
    let mut w = protozero::HeapWriter::new();
    w.root()
}

fn main() {
    leak().append_uint32(1, 1);
}
