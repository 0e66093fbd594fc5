// A child cannot be used after its parent is gone.
fn main() {
    let mut w = protozero::HeapWriter::new();
    let mut root = w.root();
    let mut child = root.begin_nested(1);
    drop(root);
    child.append_uint32(1, 1);
}
