//! XML read as its bytes arrive, for a reader that is pushed chunks split
//! anywhere. quick-xml reads whole inputs; here it is run over the bytes
//! held so far, every complete piece (tag, text run, reference, comment)
//! is handed on, and the incomplete piece at the end waits for more bytes.
//! Only that piece is held: a markup token longer than [`MAX_TOKEN`] is an
//! error (complete or not, so that how the bytes were split never
//! matters), and the held bytes are read again only once they have
//! doubled (or [`BATCH`] more arrived), so the work stays linear in the
//! input. Errors are told at the same byte however the input was split.
//!
//! The checks quick-xml leaves to its caller when read piecewise are made
//! here, as a conforming parser makes them: end tags close the open
//! element of their name, there is one root element, nothing but white
//! space, comments and processing instructions outside it, and every
//! element is closed when the document ends. References resolve to XML's
//! five predefined entities or to a character.

use quick_xml::events::Event;
use quick_xml::{Reader, XmlVersion};

/// Longest markup token (a tag with its attributes, a comment) held while
/// waiting for its end.
pub const MAX_TOKEN: usize = 1 << 20;

/// Bytes gathered before the held bytes are read.
pub const BATCH: usize = 64 * 1024;

/// Deepest element nesting read.
pub const MAX_DEPTH: usize = 1024;

/// Why the XML does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XmlError {
    /// quick-xml's syntax or well-formedness error.
    #[error("{message}")]
    Syntax {
        /// Byte offset in the input.
        offset: u64,
        /// quick-xml's words.
        message: String,
    },
    /// An end tag that closes no open element of its name.
    #[error("end tag </{name}> does not match the open element")]
    Mismatched {
        /// Byte offset in the input.
        offset: u64,
        /// The end tag's name.
        name: String,
    },
    /// Markup or text outside the one root element.
    #[error("content after the root element")]
    AfterRoot {
        /// Byte offset in the input.
        offset: u64,
    },
    /// A reference to an entity that XML does not predefine.
    #[error("undefined entity &{name};")]
    UndefinedEntity {
        /// Byte offset in the input.
        offset: u64,
        /// The entity's name.
        name: String,
    },
    /// One token longer than [`MAX_TOKEN`], or nesting past [`MAX_DEPTH`].
    #[error("{what}")]
    TooLarge {
        /// Byte offset in the input.
        offset: u64,
        /// What was too large.
        what: &'static str,
    },
    /// The document ended with elements open, or without any element.
    #[error("{0}")]
    Unfinished(String),
}

fn too_long(at: u64) -> XmlError {
    XmlError::TooLarge {
        offset: at,
        what: "an XML token longer than 1 MiB",
    }
}

/// What the XML says, piece by piece.
pub trait XmlHandler {
    /// An element opens (an empty element opens and closes at once):
    /// its name and attributes, their values unescaped.
    fn start(&mut self, name: &str, attrs: &[(String, String)]);
    /// An element closes; `at`: the byte its end tag starts at.
    fn end(&mut self, name: &str, at: u64);
    /// Character data inside the innermost open element (maybe a part of
    /// one run: the parts follow each other).
    fn text(&mut self, text: &[u8]);
    /// Whether the handler wants no more pieces (it failed).
    fn stopped(&self) -> bool;
}

/// The incremental reader.
#[derive(Debug, Default)]
pub struct XmlStream {
    /// Bytes not handed on yet (an incomplete token at most, after a read).
    held: Vec<u8>,
    /// Read the held bytes again once they are this long.
    next_read: usize,
    /// Input bytes handed on before `held`.
    offset: u64,
    /// Names of the open elements.
    open: Vec<String>,
    /// Whether the root element opened, and closed.
    root_opened: bool,
    root_closed: bool,
}

impl XmlStream {
    /// Takes the next bytes; complete pieces go to `h`.
    pub fn push(&mut self, data: &[u8], h: &mut impl XmlHandler) -> Result<(), XmlError> {
        self.held.extend_from_slice(data);
        if h.stopped() || self.held.len() < self.next_read.max(BATCH) {
            return Ok(());
        }
        self.read(h, false)?;
        self.next_read = self.held.len().saturating_mul(2);
        Ok(())
    }

    /// Ends the input: what is held must read completely.
    pub fn finish(&mut self, h: &mut impl XmlHandler) -> Result<(), XmlError> {
        self.read(h, true)?;
        if h.stopped() {
            return Ok(());
        }
        if let Some(open) = self.open.last() {
            return Err(XmlError::Unfinished(format!(
                "the document ended inside <{open}>"
            )));
        }
        if !self.root_opened {
            return Err(XmlError::Unfinished("no element found".into()));
        }
        Ok(())
    }

    /// Bytes held.
    pub fn held_bytes(&self) -> u64 {
        let names: usize = self.open.iter().map(String::len).sum();
        (self.held.capacity() + names) as u64
    }

    /// Reads the held bytes; the incomplete piece at their end stays held
    /// unless `last`.
    fn read(&mut self, h: &mut impl XmlHandler, last: bool) -> Result<(), XmlError> {
        if h.stopped() {
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        // A reader starts by dropping a byte order mark; inside the
        // document one is character data.
        const BOM: &[u8] = b"\xef\xbb\xbf";
        let mut start = 0usize;
        if self.offset > 0 && held.starts_with(BOM) {
            self.text(BOM, self.offset, h)?;
            start = BOM.len();
        }
        let held = match start {
            0 => held,
            n => held.get(n..).unwrap_or(&[]).to_vec(),
        };
        self.offset += start as u64;
        let mut r = Reader::from_reader(held.as_slice());
        {
            let c = r.config_mut();
            c.check_end_names = false;
            c.allow_unmatched_ends = true;
            c.check_comments = false;
        }
        let mut done = 0usize;
        let res = loop {
            let at = self.offset + done as u64;
            let ev = match r.read_event() {
                Ok(Event::Eof) => break Ok(()),
                Ok(ev) => ev,
                Err(e) => {
                    let incomplete = matches!(
                        e,
                        quick_xml::Error::Syntax(_)
                            | quick_xml::Error::IllFormed(
                                quick_xml::errors::IllFormedError::UnclosedReference
                            )
                    );
                    if incomplete && held.len() - done > MAX_TOKEN {
                        break Err(too_long(at));
                    }
                    if incomplete && !last {
                        break Ok(());
                    }
                    break Err(XmlError::Syntax {
                        offset: self.offset + r.error_position(),
                        message: e.to_string(),
                    });
                }
            };
            let end = usize::try_from(r.buffer_position()).unwrap_or(held.len());
            let text = matches!(ev, Event::Text(_) | Event::CData(_));
            if !text && end - done > MAX_TOKEN {
                break Err(too_long(at));
            }
            if let Err(e) = self.event(ev, at, h) {
                break Err(e);
            }
            done = end;
            if h.stopped() {
                break Ok(());
            }
        };
        self.offset += done as u64;
        self.held = held.get(done..).unwrap_or(&[]).to_vec();
        res
    }

    /// One complete piece.
    fn event(&mut self, ev: Event<'_>, at: u64, h: &mut impl XmlHandler) -> Result<(), XmlError> {
        let syntax = |e: &dyn std::fmt::Display| XmlError::Syntax {
            offset: at,
            message: e.to_string(),
        };
        let empty = matches!(ev, Event::Empty(_));
        match ev {
            Event::Start(s) | Event::Empty(s) => {
                if self.root_closed {
                    return Err(XmlError::AfterRoot { offset: at });
                }
                if self.open.len() >= MAX_DEPTH {
                    return Err(XmlError::TooLarge {
                        offset: at,
                        what: "XML nested deeper than 1024 elements",
                    });
                }
                let name = String::from_utf8(s.name().as_ref().to_vec()).map_err(|e| syntax(&e))?;
                let mut attrs = Vec::new();
                for a in s.attributes() {
                    let a = a.map_err(|e| syntax(&e))?;
                    let key = String::from_utf8(a.key.as_ref().to_vec()).map_err(|e| syntax(&e))?;
                    let value = a
                        .normalized_value(XmlVersion::Explicit1_0)
                        .map_err(|e| syntax(&e))?;
                    attrs.push((key, value.into_owned()));
                }
                self.root_opened = true;
                h.start(&name, &attrs);
                if empty {
                    // `<a/>` opens and closes at once.
                    h.end(&name, at);
                    self.root_closed = self.open.is_empty();
                } else {
                    self.open.push(name);
                }
            }
            Event::End(e) => {
                let name = e.name();
                match self.open.last() {
                    Some(open) if open.as_bytes() == name.as_ref() => {}
                    _ => {
                        return Err(XmlError::Mismatched {
                            offset: at,
                            name: String::from_utf8_lossy(name.as_ref()).into_owned(),
                        });
                    }
                }
                if let Some(open) = self.open.pop() {
                    h.end(&open, at);
                }
                self.root_closed = self.open.is_empty();
            }
            Event::Text(t) => self.text(&t, at, h)?,
            Event::CData(c) => self.text(&c, at, h)?,
            Event::GeneralRef(r) => {
                let text = match r.resolve_char_ref().map_err(|e| syntax(&e))? {
                    Some(c) => c.to_string(),
                    None => {
                        let name = String::from_utf8_lossy(&r).into_owned();
                        match quick_xml::escape::resolve_predefined_entity(&name) {
                            Some(s) => s.to_owned(),
                            None => return Err(XmlError::UndefinedEntity { offset: at, name }),
                        }
                    }
                };
                self.text(text.as_bytes(), at, h)?;
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) | Event::Eof => {}
        }
        Ok(())
    }

    /// Character data: inside an element it is handed on; outside, only
    /// white space is allowed.
    fn text(&mut self, t: &[u8], at: u64, h: &mut impl XmlHandler) -> Result<(), XmlError> {
        if self.open.is_empty() {
            let Some(first) = t.iter().position(|b| !b.is_ascii_whitespace()) else {
                return Ok(());
            };
            // Told at its first byte that is no white space: where a run
            // was cut does not move it.
            let at = at + first as u64;
            if self.root_closed {
                return Err(XmlError::AfterRoot { offset: at });
            }
            return Err(XmlError::Syntax {
                offset: at,
                message: "text before the root element".into(),
            });
        }
        h.text(t);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log {
        seen: Vec<String>,
        /// Character data since the last tag, joined as a handler joins it.
        text: Vec<u8>,
    }

    impl Log {
        fn flush(&mut self) {
            if !self.text.is_empty() {
                let t = String::from_utf8_lossy(&self.text).into_owned();
                self.seen.push(format!("\"{t}\""));
                self.text.clear();
            }
        }
    }

    impl XmlHandler for Log {
        fn start(&mut self, name: &str, attrs: &[(String, String)]) {
            self.flush();
            let a: Vec<String> = attrs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            self.seen.push(format!("<{name} {}>", a.join(",")));
        }
        fn end(&mut self, name: &str, _at: u64) {
            self.flush();
            self.seen.push(format!("</{name}>"));
        }
        fn stopped(&self) -> bool {
            false
        }
        fn text(&mut self, text: &[u8]) {
            self.text.extend_from_slice(text);
        }
    }

    fn read(doc: &[u8], step: usize) -> Result<Vec<String>, XmlError> {
        let mut s = XmlStream::default();
        let mut log = Log::default();
        for c in doc.chunks(step.max(1)) {
            s.push(c, &mut log)?;
            // Read at every push, not only per batch.
            s.read(&mut log, false)?;
        }
        s.finish(&mut log)?;
        Ok(log.seen)
    }

    const DOC: &[u8] = b"<?xml version=\"1.0\"?>\n<a x=\"1 &gt; 0\" y='q'><!-- c --><b ref=\"3\"/>t&amp;u&#65;<c>12</c></a>\n";

    #[test]
    fn pieces_are_the_same_however_the_bytes_are_split() {
        let whole = read(DOC, DOC.len()).expect("reads");
        assert_eq!(
            whole,
            vec![
                "<a x=1 > 0,y=q>",
                "<b ref=3>",
                "</b>",
                "\"t&uA\"",
                "<c >",
                "\"12\"",
                "</c>",
                "</a>",
            ]
        );
        for step in 1..DOC.len() {
            assert_eq!(read(DOC, step).expect("reads"), whole, "step {step}");
        }
    }

    #[test]
    fn malformed_documents_are_errors() {
        let bad: &[&[u8]] = &[
            b"<a><b></a></b>",
            b"<a></a><b/>",
            b"<a>",
            b"",
            b"<a>&nbsp;</a>",
            b"<a x=\"1></a>",
            b"text<a/>",
            b"<a></a>text",
        ];
        for doc in bad {
            let whole = read(doc, doc.len().max(1));
            assert!(whole.is_err(), "{:?}", String::from_utf8_lossy(doc));
            for step in [1, 3] {
                assert_eq!(read(doc, step), whole, "{:?}", String::from_utf8_lossy(doc));
            }
        }
    }

    #[test]
    fn a_token_too_long_is_the_same_error_however_it_arrives() {
        let mut s = XmlStream::default();
        let mut log = Log::default();
        s.push(b"<a><b x=\"", &mut log).expect("open");
        let long = vec![b'y'; MAX_TOKEN + BATCH];
        let early = s.push(&long, &mut log);
        assert_eq!(
            early,
            Err(XmlError::TooLarge {
                offset: 3,
                what: "an XML token longer than 1 MiB"
            })
        );
        // Closed, and read at once: the same error.
        let mut doc = b"<a><b x=\"".to_vec();
        doc.extend(&long);
        doc.extend(b"\"/></a>");
        assert_eq!(read(&doc, doc.len()), Err(early.unwrap_err()));
    }

    #[test]
    fn a_byte_order_mark_inside_the_document_is_text() {
        let doc = b"<a>1\xef\xbb\xbf2</a>";
        let whole = read(doc, doc.len()).expect("reads");
        for step in 1..doc.len() {
            assert_eq!(read(doc, step).expect("reads"), whole, "step {step}");
        }
    }
}
