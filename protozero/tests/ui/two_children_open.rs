// Two children of one parent cannot be open at the same time.
fn main() {
    let mut w = protozero::HeapWriter::new();
    let mut root = w.root();
    let mut a = root.begin_nested(1);
    let mut b = root.begin_nested(2);
    a.append_uint32(1, 1);
    b.append_uint32(1, 2);
}
