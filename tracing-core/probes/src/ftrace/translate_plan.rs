//! How each event's record is read, decided once per format table: which
//! proto field (and which encoding) a kernel field goes to, judged by the
//! kernel's type and size against the proto type (upstream's translation
//! strategies), and whether `sched_switch`/`sched_waking` records fit the
//! compact layout. The translator in `translate.rs` then only follows the
//! plans.

use super::*;

/// Classifies a kernel field as upstream's `InferFtraceType` does, from
/// the format file's declaration, size and sign.
pub(super) fn kind_of(f: &Field) -> Option<Kind> {
    let ty = f.type_name.as_str();
    if f.kind == FieldKind::CharArray && (ty == "char" || ty == "const char") && f.size > 0 {
        return Some(Kind::FixedStr);
    }
    if let FieldKind::DataLoc { string: true } = f.kind {
        return (f.size == 4).then_some(Kind::DataLoc);
    }
    if ty == "unsigned long" && f.name == "args" && f.array_len == Some(6) {
        return match f.size {
            24 => Some(Kind::Args(4)),
            48 => Some(Kind::Args(8)),
            _ => None,
        };
    }
    if ty.contains("char[]") || ty.ends_with("char *") || ty.ends_with("char*") {
        return Some(Kind::StrPtr);
    }
    if is_code_address(f) {
        return matches!(f.size, 4 | 8).then_some(Kind::SymAddr);
    }
    if is_data_pointer(f) {
        return matches!(f.size, 4 | 8).then_some(Kind::DataPtr);
    }
    if (ty == "char" || ty.starts_with("char ")) && f.size == 0 {
        return Some(Kind::CStr);
    }
    if matches!(f.kind, FieldKind::Flex { string: true }) {
        return Some(Kind::CStr);
    }
    if f.kind != FieldKind::Int && !matches!(f.kind, FieldKind::DataLoc { .. }) {
        return None;
    }
    if ty == "bool" || ty.starts_with("bool ") {
        return Some(Kind::Unsigned);
    }
    if ty.starts_with("ino_t") || ty.starts_with("i_ino") {
        return matches!(f.size, 4 | 8).then_some(Kind::Unsigned);
    }
    if ty.starts_with("dev_t") {
        return matches!(f.size, 4 | 8).then_some(Kind::DevId);
    }
    if (ty.starts_with("pid_t") || f.name == "common_pid") && f.size == 4 {
        return Some(Kind::Signed);
    }
    match (f.size, f.signed) {
        (1 | 2 | 4 | 8, true) => Some(Kind::Signed),
        (1 | 2 | 4 | 8, false) => Some(Kind::Unsigned),
        _ => None,
    }
}

/// The names under which the kernel's events hold a code address: the
/// print's and the function tracer's `ip` and `parent_ip`, kmem's
/// `call_site`, funcgraph's `func` (which upstream, too, reads as a
/// symbol address), xfs's `caller_ip`, workqueue's `function`, skb's
/// `location`, irq's `handler`.
const CODE_ADDRESS_NAMES: &[&str] = &[
    "ip",
    "parent_ip",
    "call_site",
    "callsite",
    "caller",
    "caller_ip",
    "func",
    "function",
    "location",
    "handler",
    "callback",
    "action",
    "fn",
];

/// Names under which events hold a kernel data pointer in an `unsigned
/// long` (most declare it a pointer).
const DATA_POINTER_NAMES: &[&str] = &["ptr", "skbaddr"];

/// Whether `f` is a C pointer (`void *`, `struct page *`), not a string.
fn is_pointer(f: &Field) -> bool {
    f.type_name.contains('*')
}

/// Whether `f` holds a kernel code address though it is not declared
/// `void *` (an `unsigned long`, another pointer, a function-pointer
/// typedef such as `initcall_t`). Upstream writes these as plain numbers;
/// here they are interned like `void *` fields, so that no kernel address
/// reaches a trace (issue 47): with `symbolize_ksyms` the index is named.
/// A field of such a name that is a plain number (kvm's `unsigned int
/// function`) is left one.
fn is_code_address(f: &Field) -> bool {
    let ty = f.type_name.as_str();
    let void = ty.starts_with("void*") || ty.starts_with("void *");
    CODE_ADDRESS_NAMES.contains(&f.name.as_str())
        && (void
            || f.kind == FieldKind::Int
                && !f.signed
                && (ty == "unsigned long" || ty.contains('*') || ty.ends_with("_t")))
}

/// Whether `f` holds a kernel data pointer: any pointer that is not a
/// code address (a `void *` such as kmalloc's `ptr` or workqueue's
/// `work`, a `struct page *`, a `struct sk_buff *`), or an `unsigned long`
/// of a name that holds one (`ptr`, `skbaddr`). Upstream writes these as
/// plain numbers; here each is its keyed hash (`pointer_hash.rs`), so
/// that no kernel address reaches a trace (issue 47) while equal pointers
/// still match within the session.
fn is_data_pointer(f: &Field) -> bool {
    if f.signed {
        return false;
    }
    let ty = f.type_name.as_str();
    let void = ty.starts_with("void*") || ty.starts_with("void *");
    void || f.kind == FieldKind::Int
        && (is_pointer(f) || ty == "unsigned long" && DATA_POINTER_NAMES.contains(&f.name.as_str()))
}

/// Whether upstream has a translation strategy from this kernel field to
/// this proto type (else it leaves the field out).
pub(super) fn fits(kind: Kind, size: usize, ty: ProtoType) -> bool {
    use ProtoType as P;
    match kind {
        Kind::FixedStr | Kind::CStr | Kind::DataLoc | Kind::StrPtr => ty == P::String,
        Kind::Signed => match ty {
            P::Int64 => true,
            P::Int32 => size <= 4,
            _ => false,
        },
        Kind::Unsigned => match ty {
            P::Uint64 => true,
            P::Uint32 => size <= 4,
            _ => false,
        },
        Kind::DevId | Kind::SymAddr | Kind::DataPtr => ty == P::Uint64,
        Kind::Args(_) => ty == P::RepeatedUint64,
    }
}

/// The end of a field (offset + size), saturating.
pub(super) fn end_of(f: &Field) -> usize {
    f.offset.saturating_add(f.size)
}

/// Is `f` a 4-byte signed `int` (not a `pid_t`)?
pub(super) fn is_int32(f: &Field) -> bool {
    kind_of(f) == Some(Kind::Signed) && f.size == 4 && !f.type_name.starts_with("pid_t")
}

/// Is `f` a 4-byte `pid_t`?
pub(super) fn is_pid32(f: &Field) -> bool {
    f.type_name.starts_with("pid_t") && f.size == 4
}

/// Is `f` a `char[16]`?
pub(super) fn is_comm(f: &Field) -> bool {
    kind_of(f) == Some(Kind::FixedStr) && f.size == COMM_LEN
}

pub(super) fn compact_format(table: &FormatTable, common: &[Field]) -> Option<CompactFormat> {
    let find = |name: &str| table.formats().find(|f| f.name == name);
    let sw = find("sched_switch")?;
    let wk = find("sched_waking")?;
    let common_end = common.iter().map(end_of).max().unwrap_or(0);
    let size_of = |e: &EventFormat, used: &[&str]| {
        used.iter()
            .filter_map(|n| e.fields.iter().find(|f| f.name == *n))
            .map(end_of)
            .max()
            .unwrap_or(0)
            .max(common_end)
    };
    let get = |e: &'_ EventFormat, n: &str| e.fields.iter().find(|f| f.name == n).cloned();
    let prev_state = get(sw, "prev_state")?;
    let next_pid = get(sw, "next_pid")?;
    let next_prio = get(sw, "next_prio")?;
    let next_comm = get(sw, "next_comm")?;
    let state_ok = kind_of(&prev_state) == Some(Kind::Signed)
        && matches!(prev_state.size, 4 | 8)
        && !prev_state.type_name.starts_with("pid_t");
    if !(state_ok && is_pid32(&next_pid) && is_int32(&next_prio) && is_comm(&next_comm)) {
        return None;
    }
    let pid = get(wk, "pid")?;
    let target_cpu = get(wk, "target_cpu")?;
    let prio = get(wk, "prio")?;
    let comm = get(wk, "comm")?;
    let flags = common.iter().find(|f| f.name == "common_flags")?;
    let flags_ok = flags.size == 1 && !flags.signed && flags.kind == FieldKind::Int;
    if !(is_pid32(&pid) && is_int32(&target_cpu) && is_int32(&prio) && is_comm(&comm) && flags_ok) {
        return None;
    }
    // The event size upstream checks counts the fields its proto message
    // has (the typed translation's), not only those compact reads.
    let switch_fields: Vec<&str> = message_fields("sched_switch");
    let waking_fields: Vec<&str> = message_fields("sched_waking");
    Some(CompactFormat {
        switch_id: sw.id,
        switch_size: size_of(sw, &switch_fields),
        prev_state: (prev_state.offset, prev_state.size),
        next_pid: next_pid.offset,
        next_prio: next_prio.offset,
        next_comm: next_comm.offset,
        waking_id: wk.id,
        waking_size: size_of(wk, &waking_fields),
        pid: pid.offset,
        target_cpu: target_cpu.offset,
        prio: prio.offset,
        comm: comm.offset,
        common_flags: flags.offset,
    })
}

/// The proto field names of a typed event.
pub(super) fn message_fields(event: &str) -> Vec<&'static str> {
    FTRACE_EVENT_MESSAGES
        .iter()
        .find(|m| m.name == event)
        .map(|m| m.fields.iter().map(|f| f.name).collect())
        .unwrap_or_default()
}

/// The plan of a non-compact event: typed where upstream knows the event,
/// generic otherwise.
pub(super) fn plan_event(format: &EventFormat, common_end: usize) -> EventPlan {
    let mut size = common_end;
    let known = FTRACE_EVENT_MESSAGES.iter().find(|m| m.name == format.name);
    let plan = match known {
        Some(m) => {
            let mut steps = Vec::new();
            for pf in m.fields {
                let Some(f) = format.fields.iter().find(|f| f.name == pf.name) else {
                    continue;
                };
                let Some(kind) = kind_of(f) else { continue };
                if !fits(kind, f.size, pf.ty) {
                    continue;
                }
                size = size.max(end_of(f));
                steps.push(step(f, kind, pf.number));
            }
            Plan::Typed {
                field: m.field,
                steps,
            }
        }
        None => {
            let mut steps = Vec::new();
            for f in &format.fields {
                size = size.max(end_of(f));
                // `args[6]` as a generic field is read as its first element
                // upstream; any other unclassified field is left out.
                let Some(kind) = kind_of(f) else { continue };
                let kind = match kind {
                    Kind::Args(n) => {
                        let mut s = step(f, Kind::Unsigned, 0);
                        s.size = n;
                        steps.push(s);
                        continue;
                    }
                    k => k,
                };
                steps.push(step(f, kind, 0));
            }
            Plan::Generic {
                name: format.name.clone(),
                steps,
            }
        }
    };
    EventPlan {
        plan,
        size,
        renames: None,
    }
}

pub(super) fn step(f: &Field, kind: Kind, number: u32) -> Step {
    Step {
        offset: f.offset,
        size: f.size,
        kind,
        number,
        name: f.name.clone(),
    }
}
