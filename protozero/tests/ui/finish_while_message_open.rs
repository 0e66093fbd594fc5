// The writer cannot be finished (or read) while a message on it is open.
fn main() {
    let mut w = protozero::HeapWriter::new();
    let mut root = w.root();
    let bytes = w.finish();
    root.append_uint32(1, 1);
    drop(bytes);
}
