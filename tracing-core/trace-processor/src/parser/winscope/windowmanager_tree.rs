//! WindowManager's window container tree (`root_window_container` of a
//! dump) flattened into one record per container, depth first, parents
//! before children: its kind, title and token (from its identifier, or
//! the kind's own fields), its parent's token and place among the
//! parent's children, its visibility, a name override for tasks and
//! starting/debugger windows, the rectangle of a display or window, and
//! its proto with the children cut out. A container missing the fields
//! that identify it makes the dump unreadable. Sans-IO but for the
//! walk's position (display and window depth), which carries over from
//! dump to dump as the platform's walker keeps it.

use protozero::{Decoder, Field, FieldValue};

/// One container.
#[derive(Debug, Clone, PartialEq)]
pub struct Container {
    /// Its kind ("RootWindowContainer", "DisplayContent", ...).
    pub kind: &'static str,
    /// Its title.
    pub title: String,
    /// Its token (hash code).
    pub token: i32,
    /// Its parent's token (none for the root).
    pub parent_token: Option<i32>,
    /// Its index among its parent's children (none for the root).
    pub child_index: Option<u32>,
    /// Whether it is visible.
    pub visible: bool,
    /// Its rectangle: a display's logical size or a window's frame.
    pub rect: Option<ContainerRect>,
    /// A name shown instead of the title.
    pub name_override: Option<String>,
    /// Its proto (a `RootWindowContainerProto` for the root, else a
    /// `WindowContainerChildProto`) with the children cut out.
    pub pruned: Vec<u8>,
}

/// A container's rectangle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContainerRect {
    /// Left, top, width, height.
    pub xywh: [i32; 4],
    /// The display it is on (its group).
    pub display_id: i32,
    /// Its depth among the display's windows.
    pub depth: u32,
    /// Whether it is visible.
    pub visible: bool,
    /// A window's alpha.
    pub opacity: Option<f64>,
}

/// Where the walk is: the display being walked and the next window depth.
#[derive(Debug, Clone, Copy)]
pub struct WalkPosition {
    display_id: i32,
    depth: u32,
}

impl Default for WalkPosition {
    fn default() -> WalkPosition {
        WalkPosition {
            display_id: -1,
            depth: 0,
        }
    }
}

/// A container lacked the fields that identify it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingField;

/// The fields the walk reads, by message.
mod f {
    /// WindowManagerTraceEntry.window_manager_service.
    pub const ENTRY_SERVICE: u32 = 3;
    /// WindowManagerServiceDumpProto.root_window_container.
    pub const SERVICE_ROOT: u32 = 2;
    /// RootWindowContainerProto.window_container (and DisplayAreaProto's,
    /// TaskProto's, TaskFragmentProto's, WindowTokenProto's,
    /// WindowStateProto's).
    pub const WINDOW_CONTAINER: u32 = 1;
    /// WindowContainerProto.visible.
    pub const WC_VISIBLE: u32 = 3;
    /// WindowContainerProto.children.
    pub const WC_CHILDREN: u32 = 5;
    /// WindowContainerProto.identifier.
    pub const WC_IDENTIFIER: u32 = 6;
    /// IdentifierProto.hash_code.
    pub const ID_HASH: u32 = 1;
    /// IdentifierProto.title.
    pub const ID_TITLE: u32 = 3;
    /// WindowContainerChildProto's kinds.
    pub const CHILD_WINDOW_CONTAINER: u32 = 2;
    pub const CHILD_DISPLAY_CONTENT: u32 = 3;
    pub const CHILD_DISPLAY_AREA: u32 = 4;
    pub const CHILD_TASK: u32 = 5;
    pub const CHILD_ACTIVITY: u32 = 6;
    pub const CHILD_WINDOW_TOKEN: u32 = 7;
    pub const CHILD_WINDOW: u32 = 8;
    pub const CHILD_TASK_FRAGMENT: u32 = 9;
    /// DisplayContentProto.
    pub const DC_ID: u32 = 2;
    pub const DC_DISPLAY_INFO: u32 = 10;
    pub const DC_ROOT_DISPLAY_AREA: u32 = 21;
    /// DisplayInfoProto.
    pub const DI_LOGICAL_WIDTH: u32 = 1;
    pub const DI_LOGICAL_HEIGHT: u32 = 2;
    pub const DI_NAME: u32 = 5;
    /// DisplayAreaProto.name.
    pub const DA_NAME: u32 = 2;
    /// TaskProto.
    pub const TASK_ID: u32 = 2;
    pub const TASK_FRAGMENT: u32 = 31;
    pub const TASK_NAME: u32 = 32;
    /// ActivityRecordProto.
    pub const ACTIVITY_NAME: u32 = 1;
    pub const ACTIVITY_WINDOW_TOKEN: u32 = 2;
    pub const ACTIVITY_VISIBLE: u32 = 24;
    /// WindowTokenProto.hash_code.
    pub const TOKEN_HASH: u32 = 2;
    /// WindowStateProto.
    pub const WS_ATTRIBUTES: u32 = 5;
    pub const WS_IS_VISIBLE: u32 = 38;
    pub const WS_FRAMES: u32 = 41;
    /// WindowFramesProto.frame.
    pub const FRAMES_FRAME: u32 = 5;
    /// WindowLayoutParamsProto.alpha.
    pub const ATTR_ALPHA: u32 = 12;
}

/// The prefixes of titles whose rest is the name shown.
const NAME_PREFIXES: [&str; 2] = ["Starting ", "Waiting For Debugger: "];

fn last(bytes: &[u8], id: u32) -> Option<Field<'_>> {
    Decoder::new(bytes).find_last(id)
}

/// The last value of a message field (empty when absent).
fn msg(bytes: &[u8], id: u32) -> &[u8] {
    match Decoder::new(bytes).find_last(id).map(|f| f.value) {
        Some(FieldValue::Bytes(b)) => b,
        _ => &[],
    }
}

fn has(bytes: &[u8], id: u32) -> bool {
    Decoder::new(bytes).find_last(id).is_some()
}

fn int(bytes: &[u8], id: u32) -> Option<i32> {
    last(bytes, id).and_then(|f| f.as_i32().ok())
}

fn flag(bytes: &[u8], id: u32) -> bool {
    last(bytes, id)
        .and_then(|f| f.as_bool().ok())
        .unwrap_or(false)
}

fn text(bytes: &[u8], id: u32) -> Option<String> {
    match Decoder::new(bytes).find_last(id).map(|f| f.value) {
        Some(FieldValue::Bytes(b)) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

/// An identifier's token and title (both required).
fn identifier(window_container: &[u8]) -> Result<(i32, String), MissingField> {
    let id = msg(window_container, f::WC_IDENTIFIER);
    match (int(id, f::ID_HASH), text(id, f::ID_TITLE)) {
        (Some(token), Some(title)) => Ok((token, title)),
        _ => Err(MissingField),
    }
}

/// Walks a dump (`WindowManagerTraceEntry` bytes); the containers, or
/// the error that makes the dump's tree unreadable.
pub fn walk(entry: &[u8], pos: &mut WalkPosition) -> Result<Vec<Container>, MissingField> {
    let root = msg(msg(entry, f::ENTRY_SERVICE), f::SERVICE_ROOT);
    if !has(root, f::WINDOW_CONTAINER) {
        return Err(MissingField);
    }
    let wc = msg(root, f::WINDOW_CONTAINER);
    let (token, title) = identifier(wc)?;
    let mut out = vec![Container {
        kind: "RootWindowContainer",
        title,
        token,
        parent_token: None,
        child_index: None,
        visible: flag(wc, f::WC_VISIBLE),
        rect: None,
        name_override: None,
        pruned: super::windowmanager_prune::root(root),
    }];
    children(wc, token, pos, &mut out)?;
    Ok(out)
}

/// Walks a window container's children; every child is tried, and an
/// error in any makes the whole walk fail.
fn children(
    wc: &[u8],
    parent: i32,
    pos: &mut WalkPosition,
    out: &mut Vec<Container>,
) -> Result<(), MissingField> {
    let mut failed = false;
    let mut index = 0u32;
    for field in Decoder::new(wc).map_while(Result::ok) {
        if field.id != f::WC_CHILDREN {
            continue;
        }
        let FieldValue::Bytes(child_bytes) = field.value else {
            continue;
        };
        if child(child_bytes, parent, index, pos, out).is_err() {
            failed = true;
        }
        index += 1;
    }
    if failed { Err(MissingField) } else { Ok(()) }
}

/// One `WindowContainerChildProto`: its kind decides how it is read.
fn child(
    bytes: &[u8],
    parent: i32,
    index: u32,
    pos: &mut WalkPosition,
    out: &mut Vec<Container>,
) -> Result<(), MissingField> {
    let base = |kind, title, token, visible| Container {
        kind,
        title,
        token,
        parent_token: Some(parent),
        child_index: Some(index),
        visible,
        rect: None,
        name_override: None,
        pruned: super::windowmanager_prune::child(bytes),
    };
    if has(bytes, f::CHILD_WINDOW_CONTAINER) {
        let wc = msg(bytes, f::CHILD_WINDOW_CONTAINER);
        let (token, title) = identifier(wc)?;
        out.push(base(
            "WindowContainer",
            title,
            token,
            flag(wc, f::WC_VISIBLE),
        ));
        return children(wc, token, pos, out);
    }
    if has(bytes, f::CHILD_DISPLAY_CONTENT) {
        let dc = msg(bytes, f::CHILD_DISPLAY_CONTENT);
        let info = msg(dc, f::DC_DISPLAY_INFO);
        let wc = msg(msg(dc, f::DC_ROOT_DISPLAY_AREA), f::WINDOW_CONTAINER);
        let token = int(msg(wc, f::WC_IDENTIFIER), f::ID_HASH).ok_or(MissingField)?;
        let title = text(info, f::DI_NAME).ok_or(MissingField)?;
        let display_id = int(dc, f::DC_ID).unwrap_or(0);
        let mut c = base("DisplayContent", title, token, flag(wc, f::WC_VISIBLE));
        c.rect = Some(ContainerRect {
            xywh: [
                0,
                0,
                int(info, f::DI_LOGICAL_WIDTH).unwrap_or(0),
                int(info, f::DI_LOGICAL_HEIGHT).unwrap_or(0),
            ],
            display_id,
            depth: 0,
            visible: false,
            opacity: None,
        });
        out.push(c);
        pos.display_id = display_id;
        pos.depth = 1;
        return children(wc, token, pos, out);
    }
    if has(bytes, f::CHILD_DISPLAY_AREA) {
        let da = msg(bytes, f::CHILD_DISPLAY_AREA);
        let wc = msg(da, f::WINDOW_CONTAINER);
        let token = int(msg(wc, f::WC_IDENTIFIER), f::ID_HASH).ok_or(MissingField)?;
        let title = text(da, f::DA_NAME).ok_or(MissingField)?;
        out.push(base("DisplayArea", title, token, flag(wc, f::WC_VISIBLE)));
        return children(wc, token, pos, out);
    }
    if has(bytes, f::CHILD_TASK) {
        return task(msg(bytes, f::CHILD_TASK), base, pos, out);
    }
    if has(bytes, f::CHILD_ACTIVITY) {
        let activity = msg(bytes, f::CHILD_ACTIVITY);
        let window_token = msg(activity, f::ACTIVITY_WINDOW_TOKEN);
        let wc = msg(window_token, f::WINDOW_CONTAINER);
        let token = int(window_token, f::TOKEN_HASH).ok_or(MissingField)?;
        let title = text(activity, f::ACTIVITY_NAME).ok_or(MissingField)?;
        out.push(base(
            "Activity",
            title,
            token,
            flag(activity, f::ACTIVITY_VISIBLE),
        ));
        return children(wc, token, pos, out);
    }
    if has(bytes, f::CHILD_WINDOW_TOKEN) {
        let window_token = msg(bytes, f::CHILD_WINDOW_TOKEN);
        let wc = msg(window_token, f::WINDOW_CONTAINER);
        let token = int(window_token, f::TOKEN_HASH).ok_or(MissingField)?;
        // The title is the token's bits in hex, "0x" and at least two
        // digits.
        let title = format!("0x{:02x}", token as u32);
        out.push(base("WindowToken", title, token, flag(wc, f::WC_VISIBLE)));
        return children(wc, token, pos, out);
    }
    if has(bytes, f::CHILD_WINDOW) {
        let ws = msg(bytes, f::CHILD_WINDOW);
        let wc = msg(ws, f::WINDOW_CONTAINER);
        let (token, title) = identifier(wc)?;
        let frame = msg(msg(ws, f::WS_FRAMES), f::FRAMES_FRAME);
        let side = |id| int(frame, id).unwrap_or(0);
        let (l, t, r, b) = (side(1), side(2), side(3), side(4));
        let visible = flag(ws, f::WS_IS_VISIBLE);
        let alpha = last(msg(ws, f::WS_ATTRIBUTES), f::ATTR_ALPHA)
            .and_then(|a| a.as_f32().ok())
            .unwrap_or(0.0);
        let name_override = NAME_PREFIXES
            .iter()
            .find_map(|p| title.strip_prefix(p))
            .map(str::to_owned);
        let mut c = base("WindowState", title, token, visible);
        c.rect = Some(ContainerRect {
            xywh: [l, t, r.wrapping_sub(l), b.wrapping_sub(t)],
            display_id: pos.display_id,
            depth: pos.depth,
            visible,
            opacity: Some(f64::from(alpha)),
        });
        pos.depth = pos.depth.wrapping_add(1);
        c.name_override = name_override;
        out.push(c);
        return children(wc, token, pos, out);
    }
    if has(bytes, f::CHILD_TASK_FRAGMENT) {
        let wc = msg(msg(bytes, f::CHILD_TASK_FRAGMENT), f::WINDOW_CONTAINER);
        let (token, title) = identifier(wc)?;
        out.push(base("TaskFragment", title, token, flag(wc, f::WC_VISIBLE)));
        return children(wc, token, pos, out);
    }
    Err(MissingField)
}

/// A task: identified by its fragment's window container when it has
/// one, named by its id and task name, its children those of whichever
/// window container has them (the fragment's first).
fn task(
    task: &[u8],
    base: impl Fn(&'static str, String, i32, bool) -> Container,
    pos: &mut WalkPosition,
    out: &mut Vec<Container>,
) -> Result<(), MissingField> {
    let own_wc = msg(task, f::WINDOW_CONTAINER);
    let fragment = msg(task, f::TASK_FRAGMENT);
    let fragment_wc = msg(fragment, f::WINDOW_CONTAINER);
    let wc = if has(task, f::TASK_FRAGMENT) && has(fragment, f::WINDOW_CONTAINER) {
        fragment_wc
    } else {
        own_wc
    };
    let (token, title) = identifier(wc)?;
    let name_override =
        int(task, f::TASK_ID).map(
            |id| match text(task, f::TASK_NAME).filter(|n| !n.is_empty()) {
                Some(name) => format!("{id}({name})"),
                None => id.to_string(),
            },
        );
    let mut c = base("Task", title, token, flag(wc, f::WC_VISIBLE));
    c.name_override = name_override;
    out.push(c);
    let with_children = if has(fragment_wc, f::WC_CHILDREN) {
        fragment_wc
    } else {
        own_wc
    };
    children(with_children, token, pos, out)
}
