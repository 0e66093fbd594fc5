//! One Chrome JSON trace event, read from its object into the few fields
//! the importer uses (phase, times, pid/tid, ids, scope, flow bits) with
//! Perfetto's rules for each: times in microseconds (numbers or numbers in
//! strings) become nanoseconds, a pid or tid given as a string names a
//! process or thread, `id`/`id2` make the async cookie, `args` stays as its
//! raw bytes until the event is parsed.

use crate::column_store::strings::StrId;
use crate::storage::Storage;
use crate::storage::args::{Arg, ArgSetBuilder};

use super::args::{self, KeyCache};
use super::scan::{self, Fields, ScanError, Value};

/// An `id`, `bind_id` or `id2` member: a string or an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// A string id (interned).
    Str(StrId),
    /// An integer id.
    Int(u64),
}

/// Which kind of id made an async event's cookie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieKind {
    /// `id`, or `id2.global`: one track per cookie across processes.
    Global,
    /// `id2.local`: scoped to the event's process.
    Local,
}

/// An instant's scope (`s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// None given (the thread).
    #[default]
    None,
    /// `g`.
    Global,
    /// `p`.
    Process,
    /// `t`.
    Thread,
}

/// One event, ready to be sorted and parsed.
#[derive(Debug, Clone, Default)]
pub struct JsonEvent {
    /// The phase's first character.
    pub phase: u8,
    /// Duration (ns) of `X` and `T` events; the call tree node of a V8
    /// profile sample (`P`, see `v8_profile.rs`).
    pub dur: Option<i64>,
    /// Thread time (ns).
    pub tts: Option<i64>,
    /// Thread duration (ns).
    pub tdur: Option<i64>,
    /// Process id (a string pid: its interned id, see `pid_name`).
    pub pid: i64,
    /// Thread id (likewise).
    pub tid: i64,
    /// The pid was given.
    pub pid_exists: bool,
    /// The tid was given.
    pub tid_exists: bool,
    /// The pid was a string: the process's name.
    pub pid_name: Option<StrId>,
    /// The tid was a string: the thread's name.
    pub tid_name: Option<StrId>,
    /// Category (NULL when none or empty).
    pub cat: StrId,
    /// Name (NULL when none or empty).
    pub name: StrId,
    /// `id`.
    pub id: Option<Id>,
    /// `bind_id` (v2 flows).
    pub bind_id: Option<Id>,
    /// `flow_in`.
    pub flow_in: bool,
    /// `flow_out`.
    pub flow_out: bool,
    /// `s`.
    pub scope: Scope,
    /// `bp` was `e`.
    pub bind_enclosing: bool,
    /// The async cookie and what made it.
    pub cookie: Option<(CookieKind, i64)>,
    /// `args`, when an object, as its bytes: kept for the phases that read
    /// their args as fields (`C`, `T`, `M`, `P`).
    pub args: Option<Vec<u8>>,
    /// `args` already keyed and interned, for the phases whose args become
    /// an arg set (see [`keeps_arg_set`]); empty when none.
    pub arg_list: Vec<Arg>,
    /// Reading `args` into `arg_list` failed part way (the args before the
    /// failure are kept; the parse counts `json_parser_failure`).
    pub args_failed: bool,
}

/// Whether events of `phase` have their args stored as an arg set (slices
/// and instants), rather than read as fields (counters, thread states,
/// metadata, V8 samples) or not at all (flows and the rest).
pub fn keeps_arg_set(phase: u8) -> bool {
    matches!(
        phase,
        b'B' | b'E' | b'X' | b'b' | b'e' | b'n' | b'i' | b'I' | b'R'
    )
}

/// Whether events of `phase` have their args read as fields at parse time.
pub fn keeps_raw_args(phase: u8) -> bool {
    matches!(phase, b'C' | b'T' | b'M' | b'P')
}

/// What reading an event gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// An event, at its time (ns), read into the [`JsonEvent`] given.
    Event(i64),
    /// Nothing to keep (an object without a phase, ...); the stat to
    /// count, if any.
    Skip(Option<&'static str>),
    /// A time that does not read stops the reading of the trace, as
    /// upstream's reader stalls on it; the stat to count.
    Stall(&'static str),
}

/// A time (µs in the trace) in ns, as upstream converts it: an integral
/// value exactly, a fractional one rounded.
pub fn coerce_ts(v: &Value<'_>) -> Option<i64> {
    match v {
        Value::Int(i) => Some(i.wrapping_mul(1000)),
        Value::Float(d) => Some(float_ns(*d)),
        Value::Str(s) => {
            let b = s.as_bytes();
            // The string must hold exactly one number.
            let mut text = Vec::with_capacity(b.len() + 1);
            text.extend_from_slice(b);
            text.push(b'"');
            match scan::value(&text, 0) {
                Ok((n @ (Value::Int(_) | Value::Float(_)), end)) if end == b.len() => coerce_ts(&n),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `d` µs in ns as upstream converts it (an integral value exactly, a
/// fractional one rounded half away from zero). Within ±2^52, where a
/// double's integral part and fraction are exact, the integral part is
/// taken by a cast, not by `trunc` and `round` (each a call into libm on
/// x86-64 without SSE4.1).
fn float_ns(d: f64) -> i64 {
    const EXACT: f64 = 4_503_599_627_370_496.0;
    if d.abs() < EXACT {
        let t = d as i64;
        if t as f64 == d {
            return t.wrapping_mul(1000);
        }
        let x = d * 1000.0;
        if x.abs() < EXACT {
            let r = x as i64;
            let frac = x - r as f64;
            return if frac >= 0.5 {
                r + 1
            } else if frac <= -0.5 {
                r - 1
            } else {
                r
            };
        }
    }
    if d == d.trunc() {
        (d as i64).wrapping_mul(1000)
    } else {
        (d * 1000.0).round() as i64
    }
}

/// A pid or tid as a u32, or 0 when out of range (upstream's coercion).
fn coerce_u32(n: i64) -> i64 {
    if (0..=i64::from(u32::MAX)).contains(&n) {
        n
    } else {
        0
    }
}

/// An `id`-like member.
fn extract_id(storage: &mut Storage, v: &Value<'_>) -> Option<Id> {
    match v {
        Value::Str(s) => Some(Id::Str(storage.strings.intern(s))),
        Value::Int(i) => Some(Id::Int(*i as u64)),
        _ => None,
    }
}

/// `id2`'s `local` and `global`.
fn parse_id2(storage: &mut Storage, obj: &[u8]) -> Result<(Option<Id>, Option<Id>), ScanError> {
    let mut f = Fields::new(obj, 0)?;
    let (mut local, mut global) = (None, None);
    while let Some((k, v)) = f.next_field()? {
        match &*k {
            "local" => local = extract_id(storage, &v),
            "global" => global = extract_id(storage, &v),
            _ => {}
        }
    }
    Ok((local, global))
}

/// A cookie from the category and an id, the same for the same pair.
fn cookie(cat: StrId, id: Id, storage: &Storage) -> i64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    cat.0.hash(&mut h);
    match id {
        Id::Str(s) => {
            0u8.hash(&mut h);
            storage.strings.get(s).unwrap_or("").hash(&mut h);
        }
        Id::Int(i) => {
            1u8.hash(&mut h);
            i.hash(&mut h);
        }
    }
    h.finish() as i64
}

/// Reads the event object `obj` (complete), its `args` as bytes in
/// [`JsonEvent::args`]. An error is JSON that does not read (the trace is
/// broken there). The tests' reading of one whole object.
#[cfg(test)]
pub fn read(storage: &mut Storage, obj: &[u8]) -> Result<(Read, JsonEvent), ScanError> {
    let mut e = JsonEvent::default();
    let r = read_at(storage, obj, None, &mut e)?;
    if let Read::Event(_) = r.read {
        e.args = r.args.map(<[u8]>::to_vec);
    }
    Ok((r.read, e))
}

/// An event object read where it lies.
#[derive(Debug)]
pub struct ReadAt<'a> {
    /// What the object gave.
    pub read: Read,
    /// Where it ends (after a stall, the end of the bytes).
    pub end: usize,
    /// Its `args` object's bytes, when it has one (borrowed from the
    /// bytes read, so that nothing is copied for an event whose args are
    /// keyed at once or not kept).
    pub args: Option<&'a [u8]>,
    /// The args were keyed into the [`ArgSink`] as they were read (for the
    /// phase the event had then): whether that failed part way.
    pub args_keyed: Option<bool>,
}

/// Where a slice's or instant's args are keyed while its event is read,
/// when its phase comes before them (as Chrome, `tracing-chrome` and most
/// writers put it): their bytes are then read once, not scanned for their
/// end and walked again.
#[derive(Debug)]
pub struct ArgSink<'s> {
    /// The keys met so far.
    pub cache: &'s mut KeyCache,
    /// The args (emptied first).
    pub out: &'s mut ArgSetBuilder,
}

/// Reads the event object at the start of `buf` (more may follow it) into
/// `e` (reset first; one event reused by the reader, so that nothing as
/// large as an event is moved per event) and says where it ends (after a
/// stall, the end of `buf`). The bytes may end inside the object
/// (`Incomplete`): nothing is counted then, so the object can be read
/// again once it is whole.
pub fn read_at<'a>(
    storage: &mut Storage,
    buf: &'a [u8],
    sink: Option<ArgSink<'_>>,
    e: &mut JsonEvent,
) -> Result<ReadAt<'a>, ScanError> {
    let mut id2_failed = false;
    *e = JsonEvent::default();
    let res = read_fields(storage, buf, sink, &mut id2_failed, e);
    if id2_failed && res.is_ok() {
        storage.stats.incr("json_tokenizer_failure");
    }
    res
}

/// The members of an event object the reader takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Ph,
    Ts,
    Dur,
    Tts,
    Tdur,
    Pid,
    Tid,
    Id,
    BindId,
    Cat,
    Name,
    FlowIn,
    FlowOut,
    S,
    Bp,
    Args,
    Id2,
    /// Any other key (read past).
    Other,
}

/// The members by their names.
const MEMBERS: [(&[u8], Member); 17] = [
    (b"ph", Member::Ph),
    (b"ts", Member::Ts),
    (b"dur", Member::Dur),
    (b"tts", Member::Tts),
    (b"tdur", Member::Tdur),
    (b"pid", Member::Pid),
    (b"tid", Member::Tid),
    (b"id", Member::Id),
    (b"bind_id", Member::BindId),
    (b"cat", Member::Cat),
    (b"name", Member::Name),
    (b"flow_in", Member::FlowIn),
    (b"flow_out", Member::FlowOut),
    (b"s", Member::S),
    (b"bp", Member::Bp),
    (b"args", Member::Args),
    (b"id2", Member::Id2),
];

/// The member a key names (its unescaped bytes).
fn member(name: &[u8]) -> Member {
    MEMBERS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(Member::Other, |&(_, m)| m)
}

/// The member whose key string opens at `pos` when it is written plainly
/// (its name, then the closing quote), and where the string ends: the
/// common keys are told by their first bytes without finding the string's
/// end first; a key with an escape, or any other, is left to be read.
fn plain_member(buf: &[u8], pos: usize) -> Option<(Member, usize)> {
    let rest = buf.get(pos + 1..)?;
    let is =
        |name: &[u8]| rest.get(..name.len()) == Some(name) && rest.get(name.len()) == Some(&b'"');
    let m = match *rest.first()? {
        b'p' if is(b"pid") => (Member::Pid, 3),
        b'p' if is(b"ph") => (Member::Ph, 2),
        b't' if is(b"tid") => (Member::Tid, 3),
        b't' if is(b"ts") => (Member::Ts, 2),
        b't' if is(b"tts") => (Member::Tts, 3),
        b't' if is(b"tdur") => (Member::Tdur, 4),
        b'c' if is(b"cat") => (Member::Cat, 3),
        b'n' if is(b"name") => (Member::Name, 4),
        b'a' if is(b"args") => (Member::Args, 4),
        b'd' if is(b"dur") => (Member::Dur, 3),
        b'i' if is(b"id") => (Member::Id, 2),
        b's' if is(b"s") => (Member::S, 1),
        _ => return None,
    };
    Some((m.0, pos + m.1 + 2))
}

fn read_fields<'a>(
    storage: &mut Storage,
    obj: &'a [u8],
    mut sink: Option<ArgSink<'_>>,
    id2_failed: &mut bool,
    e: &mut JsonEvent,
) -> Result<ReadAt<'a>, ScanError> {
    let stall = |stat| {
        Ok(ReadAt {
            read: Read::Stall(stat),
            end: obj.len(),
            args: None,
            args_keyed: None,
        })
    };
    let mut args: Option<&'a [u8]> = None;
    let mut args_keyed: Option<bool> = None;
    let mut f = Fields::new(obj, 0)?;
    let mut ts: Option<i64> = None;
    let (mut id2_local, mut id2_global) = (None, None);
    let mut saw_field = false;
    while let Some(k) = f.next_key_as(plain_member, member)? {
        saw_field = true;
        let at = f.position();
        if let (Member::Args, Some(sink), Some(&b'{')) = (k, sink.as_mut(), obj.get(at)) {
            if keeps_arg_set(e.phase) {
                sink.out.clear();
                let keyed = args::add_cached_at(storage, &mut *sink.cache, obj, at, &mut *sink.out);
                let end = match keyed {
                    Ok(end) => {
                        args_keyed = Some(false);
                        end
                    }
                    Err(ScanError::Incomplete) => return Err(ScanError::Incomplete),
                    // The args before the failure are kept; the object's
                    // end is found by its brackets.
                    Err(ScanError::Invalid(_)) => {
                        args_keyed = Some(true);
                        scan::block_end(obj, at)?.1
                    }
                };
                args = obj.get(at..end);
                f.after_value(end)?;
                continue;
            }
        }
        // A category or name is found by its bytes among those already met.
        if let (Member::Cat | Member::Name, Some(sink), Some(&b'"')) =
            (k, sink.as_mut(), obj.get(at))
        {
            let (bytes, end) = scan::string_bytes(obj, at)?;
            let id = sink.cache.intern_name(storage, &bytes);
            if k == Member::Cat {
                e.cat = id;
            } else {
                e.name = id;
            }
            f.after_value(end)?;
            continue;
        }
        // The phase is nearly always one plain character: its byte is
        // taken without reading the string.
        if k == Member::Ph {
            if let (Some(b'"'), Some(&c), Some(b'"')) =
                (obj.get(at), obj.get(at + 1), obj.get(at + 2))
            {
                if c.is_ascii() && c != b'\\' && c != b'"' {
                    e.phase = c;
                    f.after_value(at + 3)?;
                    continue;
                }
            }
        }
        let (v, end) = scan::value(obj, at)?;
        f.after_value(end)?;
        match k {
            Member::Ph => e.phase = v.as_str().and_then(|s| s.bytes().next()).unwrap_or(0),
            Member::Ts => ts = coerce_ts(&v),
            Member::Dur => match coerce_ts(&v) {
                Some(d) => e.dur = Some(d),
                None => return stall("json_tokenizer_failure"),
            },
            Member::Tts => match coerce_ts(&v) {
                Some(d) => e.tts = Some(d),
                None => return stall("json_tokenizer_failure"),
            },
            Member::Tdur => match coerce_ts(&v) {
                Some(d) => e.tdur = Some(d),
                None => return stall("json_tokenizer_failure"),
            },
            Member::Pid | Member::Tid => {
                let (num, name) = match &v {
                    Value::Str(s) => {
                        let id = storage.strings.intern(s);
                        (Some(i64::from(id.0)), Some(id))
                    }
                    Value::Int(i) => (Some(coerce_u32(*i)), None),
                    Value::Float(d) => (Some(coerce_u32(*d as i64)), None),
                    _ => (None, None),
                };
                if let Some(n) = num {
                    if k == Member::Pid {
                        e.pid = n;
                        e.pid_name = name;
                        e.pid_exists = true;
                    } else {
                        e.tid = n;
                        e.tid_name = name;
                        e.tid_exists = true;
                    }
                }
            }
            Member::Id => {
                if let Some(id) = extract_id(storage, &v) {
                    e.id = Some(id);
                }
            }
            Member::BindId => {
                if let Some(id) = extract_id(storage, &v) {
                    e.bind_id = Some(id);
                }
            }
            Member::Cat => e.cat = storage.strings.intern(v.as_str().unwrap_or("")),
            Member::Name => e.name = storage.strings.intern(v.as_str().unwrap_or("")),
            Member::FlowIn => {
                if let Value::Bool(b) = v {
                    e.flow_in = b;
                }
            }
            Member::FlowOut => {
                if let Value::Bool(b) = v {
                    e.flow_out = b;
                }
            }
            Member::S => match &v {
                Value::Str(s) if s == "p" => e.scope = Scope::Process,
                Value::Str(s) if s == "t" => e.scope = Scope::Thread,
                Value::Str(s) if s == "g" => e.scope = Scope::Global,
                Value::Str(_) => {}
                _ => e.scope = Scope::None,
            },
            Member::Bp => e.bind_enclosing = v.as_str() == Some("e"),
            Member::Args => {
                if let Value::Object(o) = v {
                    args = Some(o);
                    args_keyed = None;
                }
            }
            Member::Id2 => {
                if let Value::Object(o) = v {
                    match parse_id2(storage, o) {
                        Ok((l, g)) => {
                            id2_local = l;
                            id2_global = g;
                        }
                        Err(_) => *id2_failed = true,
                    }
                }
            }
            _ => {}
        }
    }
    let end = f.position();
    let skip = |stat| {
        Ok(ReadAt {
            read: Read::Skip(stat),
            end,
            args: None,
            args_keyed: None,
        })
    };
    if e.phase == 0 {
        return skip(saw_field.then_some("json_tokenizer_failure"));
    }
    let ts = match ts {
        Some(t) => t,
        None if e.phase == b'M' => 0,
        None => return skip(Some("json_tokenizer_failure")),
    };
    if e.tid == 0 && e.pid != 0 && e.tid_name.is_none() {
        e.tid = e.pid;
    }
    e.cookie = match e.id {
        Some(id) => Some((CookieKind::Global, cookie(e.cat, id, storage))),
        None => match (id2_global, id2_local) {
            (Some(g), _) => Some((CookieKind::Global, cookie(e.cat, g, storage))),
            (None, Some(l)) => Some((CookieKind::Local, cookie(e.cat, l, storage))),
            (None, None) => None,
        },
    };
    Ok(ReadAt {
        read: Read::Event(ts),
        end,
        args,
        args_keyed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_one(s: &str) -> (i64, JsonEvent) {
        let mut st = Storage::default();
        match read(&mut st, s.as_bytes()).unwrap() {
            (Read::Event(ts), e) => (ts, e),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn times_are_microseconds_as_numbers_or_strings() {
        let (ts, e) = read_one(r#"{"ph":"X","ts":5.1,"dur":"500.1","pid":3}"#);
        assert_eq!(ts, 5100);
        assert_eq!(e.dur, Some(500_100));
        assert_eq!((e.pid, e.tid), (3, 3));
        let mut st = Storage::default();
        assert!(matches!(
            read(&mut st, br#"{"ph":"X","ts":"5x","pid":3}"#).unwrap().0,
            Read::Skip(Some("json_tokenizer_failure"))
        ));
        assert!(matches!(
            read(&mut st, br#"{"ph":"X","ts":1,"dur":"5x"}"#).unwrap().0,
            Read::Stall(_)
        ));
    }

    /// A member is the same whether its key is written plainly (matched
    /// where it lies) or with escapes (read and unescaped); a key that
    /// only starts like a member's is another key.
    #[test]
    fn members_are_known_by_their_keys_however_written() {
        let (ts, e) =
            read_one(r#"{"p\u0069d":7,"t\u0069d":8,"\u0074s":2,"ph":"X","na\u006de":"n"}"#);
        assert_eq!((ts, e.pid, e.tid), (2000, 7, 8));
        assert!(!e.name.is_null());
        let (_, e) =
            read_one(r#"{"pidx":7,"tidy":8,"ts":2,"phase":"B","ph":"i","names":"n","s2":"g"}"#);
        assert_eq!((e.pid, e.tid, e.phase), (0, 0, b'i'));
        assert!(e.name.is_null());
        assert_eq!(e.scope, Scope::None);
        for name in [
            &b"pid"[..],
            b"ph",
            b"tid",
            b"ts",
            b"tts",
            b"tdur",
            b"cat",
            b"name",
            b"args",
        ] {
            let mut key = vec![b'"'];
            key.extend_from_slice(name);
            key.extend_from_slice(b"\":1");
            assert_eq!(plain_member(&key, 0).map(|m| m.0), Some(member(name)));
            assert_eq!(plain_member(&key, 0).map(|m| m.1), Some(name.len() + 2));
        }
    }

    /// Fractional times convert as `trunc` and `round` convert them,
    /// halves, signs, the edges of exactness and non-finite values
    /// included.
    #[test]
    fn float_times_convert_as_trunc_and_round_do() {
        let by_libm = |d: f64| {
            if d == d.trunc() {
                (d as i64).wrapping_mul(1000)
            } else {
                (d * 1000.0).round() as i64
            }
        };
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            0.0005,
            -0.0005,
            0.0015,
            0.0025,
            1.0005,
            1064243.070,
            -1064243.0705,
            4_503_599_627_370.496,
            4503599627370496.0,
            4503599627370495.5,
            -4503599627370495.5,
            9007199254740993.0,
            9.3e18,
            -9.3e18,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        for i in 0..2000 {
            let d = f64::from(i) * 0.0001234567 - 0.1;
            values.push(d);
            values.push(d * 1e9);
            values.push(f64::from(i) / 2000.0 + 0.0004995);
        }
        for d in values {
            assert_eq!(float_ns(d), by_libm(d), "{d}");
        }
    }

    #[test]
    fn ids_make_cookies_per_category() {
        let (_, a) = read_one(r#"{"ph":"b","ts":1,"cat":"c","id":"0x1"}"#);
        let (_, b) = read_one(r#"{"ph":"e","ts":2,"cat":"c","id":"0x1"}"#);
        let (_, c) = read_one(r#"{"ph":"b","ts":1,"cat":"c","id2":{"local":"0x1"}}"#);
        assert_eq!(a.cookie, b.cookie);
        assert_eq!(c.cookie.map(|c| c.0), Some(CookieKind::Local));
    }

    /// Args keyed while the event is read (its phase before them) are
    /// the args keyed afterwards from their bytes; after a phase that
    /// keeps no arg set, or before any phase, they are left as bytes; a
    /// failure part way keeps the args before it and the event's end.
    #[test]
    fn args_after_the_phase_are_keyed_as_the_event_is_read() {
        let mut st = Storage::default();
        let mut cache = KeyCache::new("args");
        let mut out = ArgSetBuilder::default();
        let mut read_keyed = |st: &mut Storage, text: &str| {
            let r = read_at(
                st,
                text.as_bytes(),
                Some(ArgSink {
                    cache: &mut cache,
                    out: &mut out,
                }),
                &mut JsonEvent::default(),
            )
            .unwrap();
            let args = r.args.map(<[u8]>::to_vec);
            (r.args_keyed, args, out.args().to_vec(), r.end)
        };
        let text = r#"{"ph":"X","ts":1,"args":{"a":[1,{"b":"x"}],"c":{"d":2.5}},"dur":2} tail"#;
        let (keyed, bytes, list, end) = read_keyed(&mut st, text);
        assert_eq!(keyed, Some(false));
        assert_eq!(end, text.len() - " tail".len());
        let mut from_bytes = ArgSetBuilder::default();
        args::add(&mut st, &bytes.unwrap(), "args", &mut from_bytes).unwrap();
        assert_eq!(list, from_bytes.args());
        assert_eq!(list.len(), 3);
        // The phase after the args, or a counter's: bytes only.
        for text in [
            r#"{"args":{"a":1},"ph":"X","ts":1}"#,
            r#"{"ph":"C","ts":1,"args":{"a":1}}"#,
        ] {
            let (keyed, bytes, _, _) = read_keyed(&mut st, text);
            assert_eq!(keyed, None, "{text}");
            assert_eq!(bytes.as_deref(), Some(&br#"{"a":1}"#[..]));
        }
        // A failure inside keeps what came before and reads on.
        let text = r#"{"ph":"B","ts":1,"args":{"a":1,"b":tru,"c":2},"name":"n"}"#;
        let (keyed, _, list, end) = read_keyed(&mut st, text);
        assert_eq!(keyed, Some(true));
        assert_eq!(list.len(), 1);
        assert_eq!(end, text.len());
    }
}
