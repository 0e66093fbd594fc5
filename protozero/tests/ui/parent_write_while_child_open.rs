// Writing to a parent while one of its children is open must not compile.
fn main() {
    let mut w = protozero::HeapWriter::new();
    let mut root = w.root();
    let mut child = root.begin_nested(1);
    root.append_uint32(2, 7);
    child.append_uint32(1, 1);
}
