// An open grandchild keeps both its parent and the root borrowed.
fn main() {
    let mut w = protozero::HeapWriter::new();
    let mut root = w.root();
    let mut child = root.begin_nested(1);
    let mut grandchild = child.begin_nested(2);
    child.append_uint32(3, 1);
    grandchild.append_uint32(4, 1);
}
