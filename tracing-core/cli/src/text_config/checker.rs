//! The schema walk over the tokens: unknown fields, undeclared enum values,
//! out-of-range integers and wrong-type values, each named, at its position.

use prost_reflect::{EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor, Syntax};

use super::scan::*;
use super::*;

/// Why [`Checker`] stopped early.
pub(super) enum Stop {
    /// A problem it reports.
    Found(Problem),
    /// The tokens do not follow the grammar here (prost-reflect says how).
    GiveUp,
}

/// An unknown field blanked out under [`UnknownFields::Skip`].
pub(super) struct Skip {
    pub(super) span: std::ops::Range<usize>,
    pub(super) field: String,
    pub(super) message_type: String,
}

/// A field (or extension) the walk is reading a value of.
pub(super) struct Target {
    pub(super) name: String,
    pub(super) kind: Kind,
    /// Repeated or map: takes `[...]` lists.
    pub(super) repeated: bool,
}

impl Target {
    pub(super) fn field(f: &FieldDescriptor) -> Target {
        Target {
            name: f.name().to_owned(),
            kind: f.kind(),
            repeated: f.is_list() || f.is_map(),
        }
    }
}

/// Walks the tokens against the schema; see the module documentation.
pub(super) struct Checker<'a> {
    pub(super) text: &'a str,
    pub(super) tokens: &'a [Token],
    pub(super) pos: usize,
    pub(super) skip_unknown: bool,
    pub(super) skipped: Vec<Skip>,
}

impl Checker<'_> {
    pub(super) fn peek(&self) -> Option<Token> {
        self.tokens.get(self.pos).copied()
    }

    pub(super) fn is(&self, c: u8) -> bool {
        self.peek().is_some_and(|t| t.tok == Tok::Punct(c))
    }

    pub(super) fn eat(&mut self, c: u8) -> bool {
        let yes = self.is(c);
        if yes {
            self.pos += 1;
        }
        yes
    }

    /// The next token, consumed; `GiveUp` at the end of the text.
    pub(super) fn next(&mut self) -> Result<Token, Stop> {
        let t = self.peek().ok_or(Stop::GiveUp)?;
        self.pos += 1;
        Ok(t)
    }

    pub(super) fn slice(&self, t: Token) -> &str {
        self.text.get(t.start..t.end).unwrap_or("")
    }

    /// The fields of a `desc` message, up to `closer` (or the end).
    pub(super) fn fields(
        &mut self,
        desc: &MessageDescriptor,
        closer: Option<u8>,
    ) -> Result<(), Stop> {
        loop {
            let Some(t) = self.peek() else {
                return if closer.is_none() {
                    Ok(())
                } else {
                    Err(Stop::GiveUp)
                };
            };
            match t.tok {
                Tok::Punct(c) if Some(c) == closer => {
                    self.pos += 1;
                    return Ok(());
                }
                Tok::Ident => self.field(desc, t)?,
                Tok::Punct(b'[') => self.bracketed_field(desc)?,
                _ => return Err(Stop::GiveUp),
            }
            if !self.eat(b',') {
                self.eat(b';');
            }
        }
    }

    /// `name: value` (the name is the next token).
    pub(super) fn field(&mut self, desc: &MessageDescriptor, name: Token) -> Result<(), Stop> {
        self.pos += 1;
        let text = self.slice(name);
        if let Some(f) = find_field(desc, text) {
            return self.value(&Target::field(&f));
        }
        if !self.skip_unknown {
            return Err(Stop::Found(Problem {
                offset: name.start,
                message: unknown_field(desc, text),
            }));
        }
        let field = text.to_owned();
        self.skip_value()?;
        if self.is(b',') || self.is(b';') {
            self.pos += 1;
        }
        let end = self.tokens[self.pos - 1].end;
        self.skipped.push(Skip {
            span: name.start..end,
            field,
            message_type: desc.full_name().to_owned(),
        });
        Ok(())
    }

    /// `[ext.name]: value` or `[domain/type.Name] { ... }`.
    pub(super) fn bracketed_field(&mut self, desc: &MessageDescriptor) -> Result<(), Stop> {
        self.pos += 1;
        let mut name = String::new();
        let mut domain = None;
        loop {
            let t = self.next()?;
            match t.tok {
                Tok::Ident => name.push_str(self.slice(t)),
                Tok::Punct(b'.') => name.push('.'),
                Tok::Punct(b'/') if domain.is_none() => domain = Some(std::mem::take(&mut name)),
                Tok::Punct(b']') => break,
                _ => return Err(Stop::GiveUp),
            }
        }
        match domain {
            None => {
                let ext = desc.get_extension_by_full_name(&name).ok_or(Stop::GiveUp)?;
                self.value(&Target {
                    name: ext.name().to_owned(),
                    kind: ext.kind(),
                    repeated: ext.is_list() || ext.is_map(),
                })
            }
            Some(_) => {
                let inner = desc
                    .parent_pool()
                    .get_message_by_name(&name)
                    .ok_or(Stop::GiveUp)?;
                self.eat(b':');
                self.message_value(&inner)
            }
        }
    }

    /// The value of `target`, after its name: `: value`, `: [values]`, or
    /// a message without the colon.
    pub(super) fn value(&mut self, target: &Target) -> Result<(), Stop> {
        if !(self.eat(b':') || self.is(b'{') || self.is(b'<')) {
            return Err(Stop::GiveUp);
        }
        if self.is(b'[') {
            let open = self.next()?;
            if !target.repeated {
                return Err(Stop::Found(Problem {
                    offset: open.start,
                    message: format!(
                        "'{}' is not a repeated field: it takes one value, not a list",
                        target.name
                    ),
                }));
            }
            if self.eat(b']') {
                return Ok(());
            }
            loop {
                self.single(target)?;
                if self.eat(b']') {
                    return Ok(());
                }
                if !self.eat(b',') {
                    return Err(Stop::GiveUp);
                }
            }
        }
        self.single(target)
    }

    /// `{ fields }` or `< fields >` of a `desc` message.
    pub(super) fn message_value(&mut self, desc: &MessageDescriptor) -> Result<(), Stop> {
        let t = self.next()?;
        match t.tok {
            Tok::Punct(b'{') => self.fields(desc, Some(b'}')),
            Tok::Punct(b'<') => self.fields(desc, Some(b'>')),
            _ => Err(Stop::GiveUp),
        }
    }

    /// One value (not a list) of `target`.
    pub(super) fn single(&mut self, target: &Target) -> Result<(), Stop> {
        let first = self.peek().ok_or(Stop::GiveUp)?;
        let wrong = |what: &str, found: &str| {
            Stop::Found(Problem {
                offset: first.start,
                message: format!(
                    "'{}' ({}) takes {what}, but found '{found}'",
                    target.name,
                    kind_name(&target.kind)
                ),
            })
        };
        match &target.kind {
            Kind::Message(desc) => {
                if self.is(b'{') || self.is(b'<') {
                    self.message_value(desc)
                } else {
                    Err(wrong("a message '{ ... }'", self.slice(first)))
                }
            }
            Kind::String | Kind::Bytes => {
                if first.tok != Tok::Str {
                    return Err(wrong("a quoted string", self.slice(first)));
                }
                while self.peek().is_some_and(|t| t.tok == Tok::Str) {
                    self.pos += 1;
                }
                Ok(())
            }
            Kind::Bool => {
                self.pos += 1;
                let s = self.slice(first);
                let ok = match first.tok {
                    Tok::Ident => matches!(s, "true" | "True" | "t" | "false" | "False" | "f"),
                    Tok::Int => matches!(int_value(s), Some(0 | 1)),
                    _ => false,
                };
                if ok {
                    Ok(())
                } else {
                    Err(wrong("true or false", s))
                }
            }
            Kind::Float | Kind::Double => {
                self.eat(b'-');
                let t = self.next()?;
                let s = self.slice(t);
                let ok = match t.tok {
                    Tok::Float => true,
                    // Decimal only, as in protoc and prost-reflect.
                    Tok::Int => s == "0" || !s.starts_with('0'),
                    Tok::Ident => ["inf", "infinity", "nan"]
                        .iter()
                        .any(|w| s.eq_ignore_ascii_case(w)),
                    _ => false,
                };
                if ok {
                    Ok(())
                } else {
                    Err(Stop::Found(Problem {
                        offset: t.start,
                        message: format!(
                            "'{}' ({}) takes a decimal number, but found '{s}'",
                            target.name,
                            kind_name(&target.kind)
                        ),
                    }))
                }
            }
            Kind::Enum(e) => self.enum_value(target, e),
            int => {
                let (min, max): (i128, i128) = match int {
                    Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                        (i32::MIN.into(), i32::MAX.into())
                    }
                    Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                        (i64::MIN.into(), i64::MAX.into())
                    }
                    Kind::Uint32 | Kind::Fixed32 => (0, u32::MAX.into()),
                    _ => (0, u64::MAX.into()),
                };
                self.integer(target, min, max).map(|_| ())
            }
        }
    }

    /// A `-`? integer of `target` within `min..=max`; its value.
    pub(super) fn integer(&mut self, target: &Target, min: i128, max: i128) -> Result<i128, Stop> {
        let start = self.peek().ok_or(Stop::GiveUp)?;
        let negative = self.eat(b'-');
        let t = self.next()?;
        if t.tok != Tok::Int {
            return Err(Stop::Found(Problem {
                offset: t.start,
                message: format!(
                    "'{}' ({}) takes an integer, but found '{}'",
                    target.name,
                    kind_name(&target.kind),
                    self.slice(t)
                ),
            }));
        }
        let value = int_value(self.slice(t))
            .and_then(|v| i128::try_from(v).ok())
            .map(|v| if negative { -v } else { v });
        match value {
            Some(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(Stop::Found(Problem {
                offset: start.start,
                message: format!(
                    "{} is out of range for '{}' ({}: {min} to {max})",
                    self.text.get(start.start..t.end).unwrap_or(""),
                    target.name,
                    kind_name(&target.kind)
                ),
            })),
        }
    }

    /// An enum value by name or number.
    pub(super) fn enum_value(&mut self, target: &Target, e: &EnumDescriptor) -> Result<(), Stop> {
        let t = self.peek().ok_or(Stop::GiveUp)?;
        let unknown = |what: String| {
            Stop::Found(Problem {
                offset: t.start,
                message: format!(
                    "{what} is not a value of {} (the type of '{}'); its values: {}",
                    e.full_name(),
                    target.name,
                    enum_values(e)
                ),
            })
        };
        match t.tok {
            Tok::Ident => {
                self.pos += 1;
                let name = self.slice(t);
                if e.get_value_by_name(name).is_some() {
                    Ok(())
                } else {
                    Err(unknown(format!("'{name}'")))
                }
            }
            Tok::Int | Tok::Punct(b'-') => {
                let number = self.integer(target, i32::MIN.into(), i32::MAX.into())?;
                let closed = e.parent_file().syntax() == Syntax::Proto2;
                let known = i32::try_from(number).is_ok_and(|n| e.get_value(n).is_some());
                if closed && !known {
                    Err(unknown(number.to_string()))
                } else {
                    Ok(())
                }
            }
            _ => Err(Stop::Found(Problem {
                offset: t.start,
                message: format!(
                    "'{}' ({}) takes an enum value name or number, but found '{}'",
                    target.name,
                    e.full_name(),
                    self.slice(t)
                ),
            })),
        }
    }

    /// Skips the value of an unknown field (after its name) without a
    /// schema: `: scalar`, `: "strings"`, or a bracketed value.
    pub(super) fn skip_value(&mut self) -> Result<(), Stop> {
        let colon = self.eat(b':');
        let t = self.next()?;
        match t.tok {
            Tok::Punct(b'{' | b'<' | b'[') => {
                let mut depth = 1usize;
                while depth > 0 {
                    match self.next()?.tok {
                        Tok::Punct(b'{' | b'<' | b'[') => depth += 1,
                        Tok::Punct(b'}' | b'>' | b']') => depth -= 1,
                        _ => {}
                    }
                }
                Ok(())
            }
            _ if !colon => Err(Stop::GiveUp),
            Tok::Punct(b'-') => match self.next()?.tok {
                Tok::Int | Tok::Float | Tok::Ident => Ok(()),
                _ => Err(Stop::GiveUp),
            },
            Tok::Str => {
                while self.peek().is_some_and(|t| t.tok == Tok::Str) {
                    self.pos += 1;
                }
                Ok(())
            }
            Tok::Int | Tok::Float | Tok::Ident => Ok(()),
            _ => Err(Stop::GiveUp),
        }
    }
}

/// The field `name` of `desc` as prost-reflect finds it (a group also by
/// its type's name).
pub(super) fn find_field(desc: &MessageDescriptor, name: &str) -> Option<FieldDescriptor> {
    match desc.get_field_by_name(name) {
        Some(f) if !f.is_group() => Some(f),
        _ => desc
            .get_field_by_name(&name.to_ascii_lowercase())
            .filter(|f| f.is_group() && f.kind().as_message().is_some_and(|m| m.name() == name)),
    }
}

/// The message for an unknown field `name` of `desc`, with the closest
/// known name if one is close.
pub(super) fn unknown_field(desc: &MessageDescriptor, name: &str) -> String {
    let closest = desc
        .fields()
        .map(|f| (edit_distance(name, f.name()), f.name().to_owned()))
        .min();
    match closest {
        Some((d, known)) if d <= 2 && d * 3 <= name.len() => format!(
            "unknown field '{name}' in {} (did you mean '{known}'?)",
            desc.full_name()
        ),
        _ => format!(
            "unknown field '{name}' in {}: neither Perfetto v51's schema nor the newer \
             fields zerotrace declares have it",
            desc.full_name()
        ),
    }
}

/// The values of `e`, as `NAME = n, ...` (the first 12).
pub(super) fn enum_values(e: &EnumDescriptor) -> String {
    let mut values: Vec<String> = e
        .values()
        .take(12)
        .map(|v| format!("{} = {}", v.name(), v.number()))
        .collect();
    if e.values().len() > 12 {
        values.push(format!("... ({} in all)", e.values().len()));
    }
    values.join(", ")
}

/// The type of a field as the `.proto` spells it.
pub(super) fn kind_name(kind: &Kind) -> String {
    match kind {
        Kind::Double => "double".into(),
        Kind::Float => "float".into(),
        Kind::Int32 => "int32".into(),
        Kind::Int64 => "int64".into(),
        Kind::Uint32 => "uint32".into(),
        Kind::Uint64 => "uint64".into(),
        Kind::Sint32 => "sint32".into(),
        Kind::Sint64 => "sint64".into(),
        Kind::Fixed32 => "fixed32".into(),
        Kind::Fixed64 => "fixed64".into(),
        Kind::Sfixed32 => "sfixed32".into(),
        Kind::Sfixed64 => "sfixed64".into(),
        Kind::Bool => "bool".into(),
        Kind::String => "string".into(),
        Kind::Bytes => "bytes".into(),
        Kind::Message(m) => m.full_name().to_owned(),
        Kind::Enum(e) => e.full_name().to_owned(),
    }
}

/// The edit distance between `a` and `b` (insertions, deletions,
/// substitutions and swaps of neighbours each count 1).
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: distance between a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}
