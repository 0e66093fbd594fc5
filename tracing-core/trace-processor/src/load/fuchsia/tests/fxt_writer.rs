//! A small writer of Fuchsia trace (FXT) records for the reader's tests,
//! made from the format's specification (fuchsia.dev, "Fuchsia trace
//! format"), not from the reader: records, string and thread references
//! inline or by table index, arguments of every type, and the event types'
//! numbers.

/// A string as a record refers to it.
#[derive(Clone, Copy)]
pub(super) enum S<'a> {
    Inline(&'a str),
    Table(u16),
}

/// A thread as a record refers to it.
#[derive(Clone, Copy)]
pub(super) enum T {
    Inline(u64, u64),
    Table(u8),
}

/// An argument.
#[derive(Clone, Copy)]
pub(super) enum A<'a> {
    Null(S<'a>),
    I32(S<'a>, i32),
    U32(S<'a>, u32),
    I64(S<'a>, i64),
    U64(S<'a>, u64),
    F64(S<'a>, f64),
    Str(S<'a>, S<'a>),
    Ptr(S<'a>, u64),
    Koid(S<'a>, u64),
    Bool(S<'a>, bool),
}

/// Bytes padded to whole words.
pub(super) fn padded(s: &str) -> Vec<u64> {
    s.as_bytes()
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

/// A string reference's bits and the words it adds.
pub(super) fn sref(s: S<'_>) -> (u64, Vec<u64>) {
    match s {
        S::Inline("") => (0, Vec::new()),
        S::Inline(t) => (0x8000 | t.len() as u64, padded(t)),
        S::Table(i) => (u64::from(i), Vec::new()),
    }
}

/// The FXT writer.
#[derive(Default)]
pub(super) struct Fxt {
    pub(super) words: Vec<u64>,
}

impl Fxt {
    pub(super) fn new() -> Self {
        let mut f = Fxt::default();
        // Magic number record: metadata (0), 1 word, trace info (4),
        // magic number info (0), magic 0x16547846.
        f.words.push(0x0016_5478_4604_0010);
        f
    }

    /// A record of `kind` with header bits `bits` (above bit 16) and body.
    pub(super) fn record(&mut self, kind: u64, bits: u64, body: &[u64]) {
        let size = 1 + body.len() as u64;
        self.words.push(kind | (size << 4) | bits);
        self.words.extend_from_slice(body);
    }

    pub(super) fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    pub(super) fn provider_info(&mut self, id: u64, name: &str) {
        let bits = (1 << 16) | (id << 20) | ((name.len() as u64) << 52);
        self.record(0, bits, &padded(name));
    }

    pub(super) fn provider_section(&mut self, id: u64) {
        self.record(0, (2 << 16) | (id << 20), &[]);
    }

    pub(super) fn initialization(&mut self, ticks_per_second: u64) {
        self.record(1, 0, &[ticks_per_second]);
    }

    pub(super) fn string(&mut self, index: u16, s: &str) {
        let bits = (u64::from(index) << 16) | ((s.len() as u64) << 32);
        self.record(2, bits, &padded(s));
    }

    pub(super) fn thread(&mut self, index: u8, pid: u64, tid: u64) {
        self.record(3, u64::from(index) << 16, &[pid, tid]);
    }

    /// Arguments' words.
    pub(super) fn args(args: &[A<'_>]) -> Vec<u64> {
        let mut out = Vec::new();
        for a in args {
            let (name, value_bits, kind, body): (S<'_>, u64, u64, Vec<u64>) = match *a {
                A::Null(n) => (n, 0, 0, vec![]),
                A::I32(n, v) => (n, u64::from(v as u32), 1, vec![]),
                A::U32(n, v) => (n, u64::from(v), 2, vec![]),
                A::I64(n, v) => (n, 0, 3, vec![v as u64]),
                A::U64(n, v) => (n, 0, 4, vec![v]),
                A::F64(n, v) => (n, 0, 5, vec![v.to_bits()]),
                A::Str(n, v) => {
                    let (r, w) = sref(v);
                    (n, r, 6, w)
                }
                A::Ptr(n, v) => (n, 0, 7, vec![v]),
                A::Koid(n, v) => (n, 0, 8, vec![v]),
                A::Bool(n, v) => (n, u64::from(v), 9, vec![]),
            };
            let (nref, nwords) = sref(name);
            let size = 1 + nwords.len() + body.len();
            out.push(kind | ((size as u64) << 4) | (nref << 16) | (value_bits << 32));
            out.extend(nwords);
            out.extend(body);
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn event(
        &mut self,
        kind: u64,
        ticks: u64,
        thread: T,
        cat: S<'_>,
        name: S<'_>,
        args: &[A<'_>],
        extra: &[u64],
    ) {
        let mut body = vec![ticks];
        let tref = match thread {
            T::Inline(pid, tid) => {
                body.extend([pid, tid]);
                0
            }
            T::Table(i) => u64::from(i),
        };
        let (cref, cwords) = sref(cat);
        let (nref, nwords) = sref(name);
        body.extend(cwords);
        body.extend(nwords);
        body.extend(Self::args(args));
        body.extend_from_slice(extra);
        let bits =
            (kind << 16) | ((args.len() as u64) << 20) | (tref << 24) | (cref << 32) | (nref << 48);
        self.record(4, bits, &body);
    }

    pub(super) fn kernel_object(&mut self, obj_type: u64, koid: u64, name: S<'_>, args: &[A<'_>]) {
        let (nref, nwords) = sref(name);
        let mut body = vec![koid];
        body.extend(nwords);
        body.extend(Self::args(args));
        let bits = (obj_type << 16) | (nref << 24) | ((args.len() as u64) << 40);
        self.record(7, bits, &body);
    }

    pub(super) fn context_switch(
        &mut self,
        ticks: u64,
        cpu: u64,
        out_state: u64,
        out: u64,
        inn: u64,
        args: &[A<'_>],
    ) {
        let mut body = vec![ticks, out, inn];
        body.extend(Self::args(args));
        let bits = ((args.len() as u64) << 16) | (cpu << 20) | (out_state << 36) | (1 << 60);
        self.record(8, bits, &body);
    }

    pub(super) fn wakeup(&mut self, ticks: u64, cpu: u64, tid: u64, args: &[A<'_>]) {
        let mut body = vec![ticks, tid];
        body.extend(Self::args(args));
        let bits = ((args.len() as u64) << 16) | (cpu << 20) | (2 << 60);
        self.record(8, bits, &body);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn legacy_switch(
        &mut self,
        ticks: u64,
        cpu: u64,
        out_state: u64,
        out: T,
        inn: T,
        out_prio: u64,
        in_prio: u64,
    ) {
        let mut body = vec![ticks];
        let mut r = |t: T| match t {
            T::Inline(pid, tid) => {
                body.extend([pid, tid]);
                0
            }
            T::Table(i) => u64::from(i),
        };
        let (oref, iref) = (r(out), r(inn));
        let bits = (cpu << 16)
            | (out_state << 24)
            | (oref << 28)
            | (iref << 36)
            | (out_prio << 44)
            | (in_prio << 52);
        self.record(8, bits, &body);
    }
}

pub(super) const INSTANT: u64 = 0;
pub(super) const COUNTER: u64 = 1;
pub(super) const BEGIN: u64 = 2;
pub(super) const END: u64 = 3;
pub(super) const COMPLETE: u64 = 4;
pub(super) const ASYNC_BEGIN: u64 = 5;
pub(super) const ASYNC_INSTANT: u64 = 6;
pub(super) const ASYNC_END: u64 = 7;
pub(super) const FLOW_BEGIN: u64 = 8;
pub(super) const FLOW_STEP: u64 = 9;
pub(super) const FLOW_END: u64 = 10;
