//! The words of one Fuchsia trace (FXT) record: a bounds-checked cursor
//! over its 64-bit little-endian words, the header's bit fields, string and
//! thread references (inline or by table index), the tick-to-nanosecond
//! conversion and the typed arguments. Nothing here touches the tables:
//! a read past the record's end is `None`, never a panic.

/// A string reference with this bit set is inline: its low 15 bits are the
/// length of the string that follows in the record.
const INLINE_STRING: u32 = 0x8000;
/// The length bits of an inline string reference.
const INLINE_LENGTH: u32 = 0x7fff;

/// Bits `lo..=hi` of a header word.
pub fn field(word: u64, lo: u32, hi: u32) -> u64 {
    let width = hi.saturating_sub(lo) + 1;
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    word.checked_shr(lo).unwrap_or(0) & mask
}

/// Bits `lo..=hi` as a u32 (the callers' fields are at most 32 bits wide).
pub fn field32(word: u64, lo: u32, hi: u32) -> u32 {
    u32::try_from(field(word, lo, hi)).unwrap_or(u32::MAX)
}

/// Whether a string reference is inline (0, the empty string, counts as
/// inline: it is no entry of the table).
pub fn is_inline_string(r: u32) -> bool {
    r & INLINE_STRING != 0 || r == 0
}

/// Whether a thread reference is inline (0: the pid and tid follow).
pub fn is_inline_thread(r: u32) -> bool {
    r == 0
}

/// Ticks at `ticks_per_second` as nanoseconds, rounded as upstream rounds
/// them (the high 32 bits of the ticks scaled by a rate rounded to 2^-32
/// ns, the low bits exactly); None when the rate is zero or the result
/// does not fit a non-negative i64.
pub fn ticks_to_ns(ticks: u64, ticks_per_second: u64) -> Option<i64> {
    const NS_PER_SEC: u64 = 1_000_000_000;
    if ticks_per_second == 0 {
        return None;
    }
    let per_high = (NS_PER_SEC << 32) / ticks_per_second;
    let high = (ticks >> 32).checked_mul(per_high)?;
    let low = (ticks & 0xffff_ffff) * NS_PER_SEC / ticks_per_second;
    i64::try_from(high.checked_add(low)?).ok()
}

/// A cursor over a record's words.
#[derive(Debug)]
pub struct Words<'a> {
    bytes: &'a [u8],
    /// Index of the next word.
    pos: usize,
}

impl<'a> Words<'a> {
    /// A cursor at the record's first word (its header).
    pub fn new(bytes: &'a [u8]) -> Self {
        Words { bytes, pos: 0 }
    }

    /// The next word's index.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Moves to word `pos` (reads past the end then fail).
    pub fn set_pos(&mut self, pos: usize) {
        self.pos = pos;
    }

    /// The next `n` words' bytes.
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let start = self.pos.checked_mul(8)?;
        let end = start.checked_add(n.checked_mul(8)?)?;
        self.pos = self.pos.saturating_add(n);
        self.bytes.get(start..end)
    }

    /// The next word.
    pub fn word(&mut self) -> Option<u64> {
        let b = self.take(1)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }

    /// An inline string of `len` bytes, padded to whole words.
    pub fn string(&mut self, len: usize) -> Option<&'a [u8]> {
        let b = self.take(len.div_ceil(8))?;
        b.get(..len)
    }

    /// An inline string given by its reference's length bits.
    pub fn inline_string(&mut self, r: u32) -> Option<&'a [u8]> {
        self.string((r & INLINE_LENGTH) as usize)
    }

    /// An inline thread: its process and thread koids.
    pub fn thread(&mut self) -> Option<(u64, u64)> {
        let pid = self.word()?;
        let tid = self.word()?;
        Some((pid, tid))
    }
}

/// A string as a record names it: inline bytes or a table index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrRef<'a> {
    /// The bytes themselves (empty for reference 0).
    Inline(&'a [u8]),
    /// An index into the provider's string table.
    Table(u32),
}

/// Reads the string a reference names: inline bytes from the record, or
/// the table index. None when the record ends first.
pub fn read_string<'a>(w: &mut Words<'a>, r: u32) -> Option<StrRef<'a>> {
    if is_inline_string(r) {
        w.inline_string(r).map(StrRef::Inline)
    } else {
        Some(StrRef::Table(r))
    }
}

/// An argument's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// No value.
    Null,
    /// A signed 32-bit integer.
    I32(i32),
    /// An unsigned 32-bit integer.
    U32(u32),
    /// A signed 64-bit integer.
    I64(i64),
    /// An unsigned 64-bit integer.
    U64(u64),
    /// A double.
    F64(f64),
    /// A string.
    Str(StrRef<'a>),
    /// A pointer.
    Pointer(u64),
    /// A kernel object id.
    Koid(u64),
    /// A boolean.
    Bool(bool),
    /// A type this reader does not know.
    Unknown,
}

/// One argument: its name and value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawArg<'a> {
    /// The name.
    pub name: StrRef<'a>,
    /// The value.
    pub value: Value<'a>,
}

/// Reads `n` arguments; None when one runs past the record's end. Each
/// argument's size word count moves the cursor past it, whatever its type.
pub fn read_args<'a>(w: &mut Words<'a>, n: u32) -> Option<Vec<RawArg<'a>>> {
    let mut out = Vec::with_capacity(n.min(16) as usize);
    for _ in 0..n {
        let base = w.pos();
        let h = w.word()?;
        let kind = field32(h, 0, 3);
        let size = field(h, 4, 15) as usize;
        let name = read_string(w, field32(h, 16, 31))?;
        let value = match kind {
            0 => Value::Null,
            1 => Value::I32(field32(h, 32, 63) as i32),
            2 => Value::U32(field32(h, 32, 63)),
            3 => Value::I64(w.word()? as i64),
            4 => Value::U64(w.word()?),
            5 => Value::F64(f64::from_bits(w.word()?)),
            6 => Value::Str(read_string(w, field32(h, 32, 47))?),
            7 => Value::Pointer(w.word()?),
            8 => Value::Koid(w.word()?),
            9 => Value::Bool(field(h, 32, 63) != 0),
            _ => Value::Unknown,
        };
        out.push(RawArg { name, value });
        w.set_pos(base.saturating_add(size));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_strings_and_ticks_are_bounds_checked() {
        assert_eq!(field(0xabcd_0000, 16, 31), 0xabcd);
        assert_eq!(field(u64::MAX, 0, 63), u64::MAX);
        assert!(is_inline_string(0) && is_inline_string(0x8003));
        assert!(!is_inline_string(3));
        assert_eq!(ticks_to_ns(3, 1_000), Some(3_000_000));
        assert_eq!(ticks_to_ns(3, 0), None);
        assert_eq!(ticks_to_ns(u64::MAX, 1), None);
        // A string longer than the record fails instead of reading past it.
        let mut w = Words::new(&[0u8; 8]);
        assert_eq!(w.string(9), None);
        let mut w = Words::new(&[0u8; 8]);
        assert_eq!(w.string(5), Some(&[0u8; 5][..]));
        assert_eq!(w.word(), None);
    }
}
