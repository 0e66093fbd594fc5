//! The parts of a Firefox profiler (Gecko) JSON profile that are imported,
//! read from the parsed JSON: per thread its name, tid, pid, strings,
//! frames, stacks, samples and markers, in either of the format's two
//! shapes (the legacy one of `schema` + `data` tables, `stringTable`; the
//! preprocessed one of column arrays, `stringArray`, which samply writes),
//! the `shared` block some writers put the strings or tables in, and the
//! marker category names of `meta.categories`. Values of the wrong type
//! are read as missing, as upstream reads them.

use serde_json::{Map, Value};

/// A legacy table: column name → index, and its rows.
#[derive(Debug, Default)]
pub struct LegacyTable {
    schema: Vec<(String, u32)>,
    /// Rows of cells: an index, a number, or nothing.
    pub data: Vec<Vec<Cell>>,
}

/// A cell of a legacy table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell {
    /// A non-negative integer that fits 32 bits.
    Index(u32),
    /// Another number.
    Number(f64),
    /// Null or another value.
    None,
}

impl LegacyTable {
    /// The position of a column in the rows.
    pub fn column(&self, key: &str) -> Option<usize> {
        self.schema
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v as usize)
    }

    fn read(&mut self, obj: &Map<String, Value>) {
        if let Some(Value::Object(schema)) = obj.get("schema") {
            self.schema = schema
                .iter()
                .map(|(k, v)| (k.clone(), uint(v).unwrap_or(0)))
                .collect();
        }
        if let Some(Value::Array(rows)) = obj.get("data") {
            self.data = rows
                .iter()
                .filter_map(Value::as_array)
                .map(|row| {
                    row.iter()
                        .map(|c| match (uint(c), c.as_f64()) {
                            (Some(i), _) => Cell::Index(i),
                            (None, Some(d)) => Cell::Number(d),
                            _ => Cell::None,
                        })
                        .collect()
                })
                .collect();
        }
    }
}

/// One thread (or the `shared` block).
#[derive(Debug, Default)]
pub struct Thread {
    /// Its name.
    pub name: String,
    /// Its tid.
    pub tid: u32,
    /// Its pid.
    pub pid: u32,
    /// Its strings (`stringTable` or `stringArray`).
    pub strings: Vec<String>,
    /// Whether it is in the preprocessed shape.
    pub preprocessed: bool,
    /// Legacy tables.
    pub frame_table: LegacyTable,
    /// Legacy tables.
    pub stack_table: LegacyTable,
    /// Legacy tables.
    pub samples: LegacyTable,
    /// Preprocessed: each frame's function.
    pub frame_funcs: Vec<u32>,
    /// Preprocessed: each function's name (a string index).
    pub func_names: Vec<u32>,
    /// Preprocessed: each stack's parent stack.
    pub stack_prefixes: Vec<Option<u32>>,
    /// Preprocessed: each stack's frame.
    pub stack_frames: Vec<u32>,
    /// Preprocessed: each sample's stack.
    pub sample_stacks: Vec<Option<u32>>,
    /// Preprocessed: each sample's time, ms.
    pub sample_times: Vec<f64>,
    /// Markers: name (string index), start and end (ms), phase, category.
    pub marker_names: Vec<u32>,
    /// Marker start times, ms.
    pub marker_starts: Vec<f64>,
    /// Marker end times, ms.
    pub marker_ends: Vec<f64>,
    /// Marker phases: 0 instant, 1 interval, 2 start, 3 end.
    pub marker_phases: Vec<u32>,
    /// Marker categories (index into the profile's).
    pub marker_categories: Vec<u32>,
    /// Marker payloads (objects and arrays only).
    pub marker_data: Vec<Option<Value>>,
}

/// The profile.
#[derive(Debug, Default)]
pub struct Profile {
    /// The threads.
    pub threads: Vec<Thread>,
    /// The `shared` block.
    pub shared: Option<Thread>,
    /// `meta.categories[].name`.
    pub categories: Vec<String>,
}

fn uint(v: &Value) -> Option<u32> {
    v.as_u64().and_then(|u| u32::try_from(u).ok())
}

/// A whole array of indices, or nothing when one is not.
fn uints(v: Option<&Value>) -> Option<Vec<u32>> {
    v?.as_array()?.iter().map(uint).collect()
}

/// A whole array of numbers, or nothing when one is not.
fn numbers(v: Option<&Value>) -> Option<Vec<f64>> {
    v?.as_array()?.iter().map(Value::as_f64).collect()
}

fn optional_uints(v: Option<&Value>) -> Option<Vec<Option<u32>>> {
    Some(v?.as_array()?.iter().map(uint).collect())
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// A pid or tid, a number or a string of one.
fn id(v: Option<&Value>) -> u32 {
    match v {
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        Some(v) => uint(v).unwrap_or(0),
        None => 0,
    }
}

impl Thread {
    fn read(obj: &Map<String, Value>) -> Thread {
        let mut t = Thread {
            name: obj
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            tid: id(obj.get("tid")),
            pid: id(obj.get("pid")),
            ..Thread::default()
        };
        if let Some(s) = strings(obj.get("stringTable")) {
            t.strings = s;
        }
        if let Some(v) = obj.get("stringArray").filter(|v| v.is_array()) {
            t.preprocessed = true;
            if let Some(s) = strings(Some(v)) {
                t.strings = s;
            }
        }
        if let Some(Value::Object(f)) = obj.get("frameTable") {
            t.frame_table.read(f);
            if f.get("func").is_some_and(Value::is_array) {
                t.preprocessed = true;
                t.frame_funcs = uints(f.get("func")).unwrap_or_default();
            }
        }
        if let Some(Value::Object(f)) = obj.get("funcTable") {
            t.func_names = uints(f.get("name")).unwrap_or_default();
        }
        if let Some(Value::Object(s)) = obj.get("stackTable") {
            t.stack_table.read(s);
            if let Some(p) = optional_uints(s.get("prefix")) {
                t.preprocessed = true;
                t.stack_prefixes = p;
            }
            t.stack_frames = uints(s.get("frame")).unwrap_or_default();
        }
        if let Some(Value::Object(s)) = obj.get("samples") {
            t.samples.read(s);
            if let Some(st) = optional_uints(s.get("stack")) {
                t.preprocessed = true;
                t.sample_stacks = st;
            }
            t.sample_times = numbers(s.get("time")).unwrap_or_default();
        }
        if let Some(Value::Object(m)) = obj.get("markers") {
            t.marker_names = uints(m.get("name")).unwrap_or_default();
            t.marker_starts = numbers(m.get("startTime")).unwrap_or_default();
            t.marker_ends = numbers(m.get("endTime")).unwrap_or_default();
            t.marker_phases = uints(m.get("phase")).unwrap_or_default();
            t.marker_categories = uints(m.get("category")).unwrap_or_default();
            if let Some(Value::Array(d)) = m.get("data") {
                t.marker_data = d
                    .iter()
                    .map(|v| (v.is_object() || v.is_array()).then(|| v.clone()))
                    .collect();
            }
        }
        t
    }
}

impl Profile {
    /// The profile in a parsed JSON document.
    pub fn read(doc: &Value) -> Profile {
        let mut p = Profile::default();
        let Some(root) = doc.as_object() else {
            return p;
        };
        if let Some(Value::Array(cats)) = root
            .get("meta")
            .and_then(Value::as_object)
            .and_then(|m| m.get("categories"))
        {
            p.categories = cats
                .iter()
                .filter_map(Value::as_object)
                .map(|c| {
                    c.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                })
                .collect();
        }
        if let Some(Value::Object(s)) = root.get("shared") {
            p.shared = Some(Thread::read(s));
        }
        if let Some(Value::Array(threads)) = root.get("threads") {
            p.threads = threads
                .iter()
                .filter_map(Value::as_object)
                .map(Thread::read)
                .collect();
        }
        p
    }
}
