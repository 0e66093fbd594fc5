//! A WindowManager container's proto without its children: the root's
//! `RootWindowContainerProto`, or a `WindowContainerChildProto`, copied
//! field by field with every nested `WindowContainerProto.children` left
//! out (the containers' own rows hold the children), so each container's
//! args and raw proto describe it alone. In a child, only its kind's
//! field is kept, as the platform's walker copies it.

use protozero::{Decoder, FieldValue};

/// The messages on the way down to a window container.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Root,
    WindowContainer,
    Child,
    DisplayContent,
    DisplayArea,
    Task,
    Activity,
    WindowToken,
    WindowState,
    TaskFragment,
}

/// What becomes of one field of a message of some kind.
enum Action {
    Keep,
    Drop,
    Descend(Kind),
}

fn action(kind: Kind, field: u32) -> Action {
    use Action::{Descend, Drop, Keep};
    match (kind, field) {
        // Every kind's window container, but the child's own
        // (field 2), is field 1.
        (
            Kind::Root
            | Kind::DisplayArea
            | Kind::Task
            | Kind::WindowToken
            | Kind::WindowState
            | Kind::TaskFragment,
            1,
        ) => Descend(Kind::WindowContainer),
        (Kind::WindowContainer, 5) => Drop,
        (Kind::Child, 2) => Descend(Kind::WindowContainer),
        (Kind::Child, 3) => Descend(Kind::DisplayContent),
        (Kind::Child, 4) => Descend(Kind::DisplayArea),
        (Kind::Child, 5) => Descend(Kind::Task),
        (Kind::Child, 6) => Descend(Kind::Activity),
        (Kind::Child, 7) => Descend(Kind::WindowToken),
        (Kind::Child, 8) => Descend(Kind::WindowState),
        (Kind::Child, 9) => Descend(Kind::TaskFragment),
        (Kind::Child, _) => Drop,
        (Kind::DisplayContent, 21) => Descend(Kind::DisplayArea),
        (Kind::Task, 31) => Descend(Kind::TaskFragment),
        (Kind::Activity, 2) => Descend(Kind::WindowToken),
        _ => Keep,
    }
}

/// A varint, appended.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Copies a message of `kind` into `out` with the children cut out.
fn copy(bytes: &[u8], kind: Kind, out: &mut Vec<u8>) {
    let mut d = Decoder::new(bytes);
    let mut start = 0;
    while let Some(Ok(field)) = d.read_field() {
        let end = d.offset();
        let raw = bytes.get(start..end).unwrap_or_default();
        start = end;
        match (action(kind, field.id), field.value) {
            (Action::Drop, _) => {}
            (Action::Descend(inner), FieldValue::Bytes(b)) => {
                let mut nested = Vec::with_capacity(b.len());
                copy(b, inner, &mut nested);
                put_varint(out, (u64::from(field.id) << 3) | 2);
                put_varint(out, nested.len() as u64);
                out.extend_from_slice(&nested);
            }
            _ => out.extend_from_slice(raw),
        }
    }
}

/// The root container (`RootWindowContainerProto`) without children.
pub fn root(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len().min(4096));
    copy(bytes, Kind::Root, &mut out);
    out
}

/// A child container (`WindowContainerChildProto`) without children.
pub fn child(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len().min(4096));
    copy(bytes, Kind::Child, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_windows_children_are_cut_and_its_other_fields_kept() {
        // child { window(8) { window_container(1) { visible(3): 1,
        // children(5): {..} } , is_visible(38): 1 }, token(10): 7 }
        let wc = [0x18, 0x01, 0x2a, 0x02, 0x10, 0x01];
        let mut ws = vec![0x0a, wc.len() as u8];
        ws.extend_from_slice(&wc);
        ws.extend_from_slice(&[0xb0, 0x02, 0x01]);
        let mut c = vec![0x42, ws.len() as u8];
        c.extend_from_slice(&ws);
        c.extend_from_slice(&[0x50, 0x07]);
        assert_eq!(
            child(&c),
            vec![0x42, 0x07, 0x0a, 0x02, 0x18, 0x01, 0xb0, 0x02, 0x01]
        );
    }
}
