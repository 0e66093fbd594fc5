//! Splitting a text trace into lines as its bytes arrive in pushes split
//! anywhere, with bounded memory: only the line still open is held, and a
//! line longer than [`MAX_LINE`] is not kept but reported as too long once
//! its end is reached (its bytes are dropped as they come). Each line is
//! handed out without its `\n` (a `\r` before it is left to the reader).

/// The longest line kept, in bytes; longer lines are reported as
/// [`Line::TooLong`].
pub const MAX_LINE: usize = 1 << 20;

/// One line of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A line's bytes, without its line break.
    Text(&'a [u8]),
    /// A line longer than [`MAX_LINE`], whose bytes were dropped.
    TooLong,
}

/// The splitter: the bytes of the line still open.
#[derive(Debug, Default)]
pub struct LineSplitter {
    pending: Vec<u8>,
    /// The open line is past [`MAX_LINE`]: its bytes are being dropped.
    overlong: bool,
}

impl LineSplitter {
    /// Reads `data`, handing every line it ends to `each`.
    pub fn push(&mut self, data: &[u8], mut each: impl FnMut(Line<'_>)) {
        let mut rest = data;
        while let Some(nl) = rest.iter().position(|&c| c == b'\n') {
            let (head, tail) = rest.split_at(nl);
            rest = tail.get(1..).unwrap_or(&[]);
            if self.overlong || self.pending.len().saturating_add(head.len()) > MAX_LINE {
                self.overlong = false;
                self.pending.clear();
                each(Line::TooLong);
            } else if self.pending.is_empty() {
                each(Line::Text(head));
            } else {
                self.pending.extend_from_slice(head);
                each(Line::Text(&self.pending));
                self.pending.clear();
            }
        }
        if self.overlong {
            return;
        }
        if self.pending.len().saturating_add(rest.len()) > MAX_LINE {
            self.overlong = true;
            self.pending = Vec::new();
        } else {
            self.pending.extend_from_slice(rest);
        }
    }

    /// The text ends: the last line, if it had no line break, goes to
    /// `each`.
    pub fn finish(&mut self, mut each: impl FnMut(Line<'_>)) {
        if self.overlong {
            each(Line::TooLong);
        } else if !self.pending.is_empty() {
            each(Line::Text(&self.pending));
        }
        self.overlong = false;
        self.pending = Vec::new();
    }

    /// Bytes held for the open line.
    pub fn held_bytes(&self) -> u64 {
        self.pending.capacity() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(pushes: &[&[u8]]) -> Vec<Option<Vec<u8>>> {
        let mut s = LineSplitter::default();
        let mut out = Vec::new();
        let mut take = |l: Line<'_>| {
            out.push(match l {
                Line::Text(t) => Some(t.to_vec()),
                Line::TooLong => None,
            })
        };
        for p in pushes {
            s.push(p, &mut take);
        }
        s.finish(&mut take);
        out
    }

    #[test]
    fn lines_are_the_same_however_the_bytes_are_split() {
        let text: &[u8] = b"a b\n\ncd\nlast";
        let whole = split(&[text]);
        assert_eq!(
            whole,
            vec![
                Some(b"a b".to_vec()),
                Some(Vec::new()),
                Some(b"cd".to_vec()),
                Some(b"last".to_vec())
            ]
        );
        for cut in 0..text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(split(&[a, b]), whole, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(split(&bytes), whole);
    }

    #[test]
    fn an_overlong_line_is_reported_and_not_held() {
        let long = vec![b'x'; MAX_LINE + 1];
        let mut s = LineSplitter::default();
        let mut out = Vec::new();
        for c in long.chunks(4096) {
            s.push(c, |l| out.push(l == Line::TooLong));
            assert!(s.held_bytes() <= MAX_LINE as u64 + 4096);
        }
        assert_eq!(s.held_bytes(), 0);
        s.push(b"\nok\n", |l| out.push(l == Line::TooLong));
        assert_eq!(out, vec![true, false]);
    }
}
