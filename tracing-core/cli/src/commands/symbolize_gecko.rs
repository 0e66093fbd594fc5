//! `zerotrace symbolize` for a Firefox profiler profile, the JSON samply
//! writes. samply saves each native frame as an address relative to its
//! library's image base, its function named by that address ("0x1c59b"),
//! and lists the libraries' paths and build ids in `libs`. This names
//! those frames from the binaries (found as a protobuf trace's mappings
//! are), gives each inlined function a frame of its own (outermost first,
//! `inlineDepth` counting from it, as the format has it), rebuilds the
//! stack table over the new frames, and marks the profile symbolicated:
//! every viewer, ours and the Firefox profiler's, then shows the names.

use std::collections::HashMap;

use serde_json::{Map, Value};

use zerotrace_profiling::view::SymbolLine;

/// Whether `v` is a Firefox profiler profile in the processed format
/// (what samply writes): `meta`, `libs` and `threads`.
pub(super) fn is_gecko_profile(v: &Value) -> bool {
    v.get("meta").is_some_and(Value::is_object)
        && v.get("libs").is_some_and(Value::is_array)
        && v.get("threads").is_some_and(Value::is_array)
}

/// A library the profile lists: its path and build id (`codeId`, hex).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Lib {
    /// Its path on the recording machine.
    pub path: String,
    /// Its build id as the bytes of its hex text (empty when not stated).
    pub code_id: Vec<u8>,
}

/// The profile's libraries, in `libs` order.
pub(super) fn libs(v: &Value) -> Vec<Lib> {
    let text = |l: &Value, k: &str| l.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    v.get("libs")
        .and_then(Value::as_array)
        .map(|libs| {
            libs.iter()
                .map(|l| Lib {
                    path: text(l, "path"),
                    code_id: text(l, "codeId").into_bytes(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What the naming did, for the report.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Named {
    /// Native frames with an address in a listed library.
    pub frames: usize,
    /// Of those, the frames named.
    pub named: usize,
    /// Frames added for inlined functions.
    pub inlined: usize,
}

/// Why a profile's tables cannot be rewritten.
#[derive(Debug, thiserror::Error)]
pub(super) enum GeckoError {
    /// A table is missing a column, or a cell is not what it must be.
    #[error("thread {thread}: {what}")]
    Table {
        /// The thread's position in `threads`.
        thread: usize,
        /// What is wrong.
        what: String,
    },
}

/// Names the native frames of every thread. `names(lib, address)` gives
/// the functions at a relative `address` of library `lib`, innermost
/// first (empty when nothing names it).
pub(super) fn symbolize(
    profile: &mut Value,
    mut names: impl FnMut(usize, u64) -> Vec<SymbolLine>,
) -> Result<Named, GeckoError> {
    let mut named = Named::default();
    if let Some(threads) = profile.get_mut("threads").and_then(Value::as_array_mut) {
        for (i, t) in threads.iter_mut().enumerate() {
            if let Some(t) = t.as_object_mut() {
                thread(t, &mut names, &mut named)
                    .map_err(|what| GeckoError::Table { thread: i, what })?;
            }
        }
    }
    if named.named > 0 {
        if let Some(meta) = profile.get_mut("meta").and_then(Value::as_object_mut) {
            meta.insert("symbolicated".to_owned(), Value::Bool(true));
        }
    }
    Ok(named)
}

/// The profile as JSON text with `meta` as its first key, where readers
/// (upstream's trace processor and ours) look to tell the format.
pub(super) fn to_json(profile: &Value) -> Result<Vec<u8>, serde_json::Error> {
    let Some(obj) = profile.as_object() else {
        return serde_json::to_vec(profile);
    };
    let mut out = b"{".to_vec();
    let meta = obj.get_key_value("meta");
    for (i, (k, v)) in meta
        .into_iter()
        .chain(obj.iter().filter(|(k, _)| k.as_str() != "meta"))
        .enumerate()
    {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, k)?;
        out.push(b':');
        serde_json::to_writer(&mut out, v)?;
    }
    out.push(b'}');
    Ok(out)
}

/// A table's column as an array (missing: an error naming it).
fn column<'a>(table: &'a Map<String, Value>, name: &str, key: &str) -> Result<&'a [Value], String> {
    table
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or_else(|| format!("{name} has no column {key:?}"))
}

fn index(v: Option<&Value>) -> Option<usize> {
    v.and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}

/// One thread's frames, funcs and stacks rewritten over the names.
fn thread(
    t: &mut Map<String, Value>,
    names: &mut impl FnMut(usize, u64) -> Vec<SymbolLine>,
    named: &mut Named,
) -> Result<(), String> {
    let resources = t
        .get("resourceTable")
        .and_then(Value::as_object)
        .ok_or("no resourceTable")?;
    let res_lib: Vec<Option<usize>> = column(resources, "resourceTable", "lib")?
        .iter()
        .map(|v| index(Some(v)))
        .collect();
    for key in ["frameTable", "funcTable", "stackTable"] {
        if !t.get(key).is_some_and(Value::is_object) {
            return Err(format!("no {key}"));
        }
    }
    if !t.get("stringArray").is_some_and(Value::is_array) {
        return Err("no stringArray".to_owned());
    }
    // Taken out (not copied); put back rewritten at the end.
    let mut take = |key: &str| match t.remove(key) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let (mut frames, mut funcs, stacks) =
        (take("frameTable"), take("funcTable"), take("stackTable"));
    let mut strings: Vec<Value> = match t.remove("stringArray") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let func_res: Vec<Option<usize>> = column(&funcs, "funcTable", "resource")?
        .iter()
        .map(|v| index(Some(v)))
        .collect();
    let frame_func = column(&frames, "frameTable", "func")?.to_vec();
    let frame_addr = column(&frames, "frameTable", "address")?.to_vec();
    let n_frames = frame_func.len();
    // Each column of the frame and func tables, copied row by row.
    let frame_cols: Vec<String> = frames
        .iter()
        .filter(|(_, v)| v.as_array().is_some_and(|a| a.len() == n_frames))
        .map(|(k, _)| k.clone())
        .collect();
    let n_funcs = func_res.len();
    let func_cols: Vec<String> = funcs
        .iter()
        .filter(|(_, v)| v.as_array().is_some_and(|a| a.len() == n_funcs))
        .map(|(k, _)| k.clone())
        .collect();
    let mut string_ids: HashMap<String, usize> = HashMap::new();
    let mut new_funcs: HashMap<(String, usize, Option<String>), usize> = HashMap::new();
    let mut func_rows = n_funcs;
    let mut out_frames: Map<String, Value> = frame_cols
        .iter()
        .map(|k| (k.clone(), Value::Array(Vec::new())))
        .collect();
    // Old frame → its new frames, outermost first.
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(n_frames);
    let mut n_out = 0usize;
    for j in 0..n_frames {
        let lib = index(frame_func.get(j))
            .and_then(|f| func_res.get(f).copied().flatten())
            .and_then(|r| res_lib.get(r).copied().flatten());
        let addr = frame_addr.get(j).and_then(Value::as_u64);
        let lines = match (lib, addr) {
            (Some(lib), Some(a)) => {
                named.frames += 1;
                names(lib, a)
            }
            _ => Vec::new(),
        };
        let copy_row = |out: &mut Map<String, Value>| {
            for k in &frame_cols {
                let cell = frames
                    .get(k)
                    .and_then(|c| c.get(j))
                    .cloned()
                    .unwrap_or(Value::Null);
                if let Some(Value::Array(a)) = out.get_mut(k) {
                    a.push(cell);
                }
            }
        };
        if lines.is_empty() {
            copy_row(&mut out_frames);
            chains.push(vec![n_out]);
            n_out += 1;
            continue;
        }
        named.named += 1;
        named.inlined += lines.len() - 1;
        let resource = index(frame_func.get(j)).and_then(|f| func_res.get(f).copied().flatten());
        let mut chain = Vec::with_capacity(lines.len());
        for (depth, line) in lines.iter().rev().enumerate() {
            let mut intern = |s: &str| -> usize {
                *string_ids.entry(s.to_owned()).or_insert_with(|| {
                    strings.push(Value::String(s.to_owned()));
                    strings.len() - 1
                })
            };
            let name_id = intern(&line.function_name);
            let file_id = line.source_file.as_deref().map(&mut intern);
            let key = (
                line.function_name.clone(),
                resource.unwrap_or(usize::MAX),
                line.source_file.clone(),
            );
            let func = *new_funcs.entry(key).or_insert_with(|| {
                for k in &func_cols {
                    let cell = match k.as_str() {
                        "name" => Value::from(name_id),
                        "resource" => resource.map_or(Value::from(-1), Value::from),
                        "fileName" => file_id.map_or(Value::Null, Value::from),
                        "isJS" | "relevantForJS" => Value::Bool(false),
                        _ => Value::Null,
                    };
                    if let Some(Value::Array(a)) = funcs.get_mut(k) {
                        a.push(cell);
                    }
                }
                func_rows += 1;
                func_rows - 1
            });
            copy_row(&mut out_frames);
            for (k, v) in [
                ("func", Value::from(func)),
                ("inlineDepth", Value::from(depth)),
                (
                    "line",
                    (line.line != 0)
                        .then_some(line.line)
                        .map_or(Value::Null, Value::from),
                ),
                ("nativeSymbol", Value::Null),
                ("column", Value::Null),
            ] {
                if let Some(Value::Array(a)) = out_frames.get_mut(k) {
                    if let Some(last) = a.last_mut() {
                        *last = v;
                    }
                }
            }
            chain.push(n_out);
            n_out += 1;
        }
        chains.push(chain);
    }
    frames = out_frames;
    frames.insert("length".to_owned(), Value::from(n_out));
    funcs.insert("length".to_owned(), Value::from(func_rows));

    // The stacks over the new frames: each old node becomes its frame's
    // chain of nodes; the old node's index maps to the chain's innermost.
    let prefix = column(&stacks, "stackTable", "prefix")?;
    let frame_of = column(&stacks, "stackTable", "frame")?;
    let n_stacks = frame_of.len();
    let stack_cols: Vec<String> = stacks
        .iter()
        .filter(|(k, v)| {
            k.as_str() != "prefix"
                && k.as_str() != "frame"
                && v.as_array().is_some_and(|a| a.len() == n_stacks)
        })
        .map(|(k, _)| k.clone())
        .collect();
    let mut out_stacks: Map<String, Value> = stack_cols
        .iter()
        .chain(["prefix".to_owned(), "frame".to_owned()].iter())
        .map(|k| (k.clone(), Value::Array(Vec::new())))
        .collect();
    let mut map: Vec<usize> = Vec::with_capacity(n_stacks);
    let mut n_nodes = 0usize;
    for s in 0..n_stacks {
        let mut up = match prefix.get(s) {
            Some(Value::Null) | None => None,
            Some(p) => {
                let p = index(Some(p)).ok_or_else(|| format!("stack {s}: a bad prefix"))?;
                // The format orders a prefix before the stacks on it.
                Some(
                    *map.get(p)
                        .ok_or_else(|| format!("stack {s}: its prefix {p} comes after it"))?,
                )
            }
        };
        let f = index(frame_of.get(s)).ok_or_else(|| format!("stack {s}: a bad frame"))?;
        let chain = chains
            .get(f)
            .ok_or_else(|| format!("stack {s}: no frame {f}"))?;
        for &nf in chain {
            for k in &stack_cols {
                let cell = stacks
                    .get(k)
                    .and_then(|c| c.get(s))
                    .cloned()
                    .unwrap_or(Value::Null);
                if let Some(Value::Array(a)) = out_stacks.get_mut(k) {
                    a.push(cell);
                }
            }
            if let Some(Value::Array(a)) = out_stacks.get_mut("prefix") {
                a.push(up.map_or(Value::Null, Value::from));
            }
            if let Some(Value::Array(a)) = out_stacks.get_mut("frame") {
                a.push(Value::from(nf));
            }
            up = Some(n_nodes);
            n_nodes += 1;
        }
        map.push(up.unwrap_or(0));
    }
    out_stacks.insert("length".to_owned(), Value::from(n_nodes));
    let remap = |v: &mut Value| {
        if let Some(new) = index(Some(v)).and_then(|s| map.get(s)) {
            *v = Value::from(*new);
        }
    };
    if let Some(stack) = t
        .get_mut("samples")
        .and_then(|s| s.get_mut("stack"))
        .and_then(Value::as_array_mut)
    {
        stack.iter_mut().for_each(remap);
    }
    // Markers with a stack (a cause's, or their own) keep pointing at it.
    if let Some(data) = t
        .get_mut("markers")
        .and_then(|m| m.get_mut("data"))
        .and_then(Value::as_array_mut)
    {
        for d in data.iter_mut() {
            if let Some(s) = d.get_mut("stack") {
                remap(s);
            }
            if let Some(s) = d.get_mut("cause").and_then(|c| c.get_mut("stack")) {
                remap(s);
            }
        }
    }
    t.insert("frameTable".to_owned(), Value::Object(frames));
    t.insert("funcTable".to_owned(), Value::Object(funcs));
    t.insert("stackTable".to_owned(), Value::Object(out_stacks));
    t.insert("stringArray".to_owned(), Value::Array(strings));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(name: &str) -> SymbolLine {
        SymbolLine {
            function_name: name.to_owned(),
            source_file: Some("src/main.rs".to_owned()),
            line: 7,
        }
    }

    /// A samply-shaped profile: lib 0, frames at 0x10 (main) and 0x20
    /// (an inlined helper inside `work`), one frame without a resource.
    fn profile() -> Value {
        serde_json::json!({
            "meta": {"symbolicated": false},
            "libs": [{"path": "/bin/app", "codeId": "abcd"}],
            "threads": [{
                "name": "app",
                "stringArray": ["0x10", "0x20", "idle"],
                "resourceTable": {"length": 1, "lib": [0], "name": [0]},
                "funcTable": {"length": 3, "name": [0, 1, 2], "resource": [0, 0, -1],
                              "isJS": [false, false, false], "relevantForJS": [false, false, false],
                              "fileName": [null, null, null]},
                "frameTable": {"length": 3, "address": [16, 32, -1], "func": [0, 1, 2],
                               "inlineDepth": [0, 0, 0], "category": [1, 1, 1], "line": [null, null, null],
                               "nativeSymbol": [null, null, null]},
                "stackTable": {"length": 3, "prefix": [null, 0, null], "frame": [0, 1, 2],
                               "category": [1, 1, 1]},
                "samples": {"length": 3, "stack": [1, 1, 2], "time": [1.0, 2.0, 3.0]},
                "markers": {"length": 1, "data": [{"type": "x", "cause": {"stack": 1}}]}
            }]
        })
    }

    /// The names of a sample's stack, root first.
    fn stack_names(t: &Value, mut s: usize) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let f = t["stackTable"]["frame"][s].as_u64().unwrap() as usize;
            let func = t["frameTable"]["func"][f].as_u64().unwrap() as usize;
            let name = t["funcTable"]["name"][func].as_u64().unwrap() as usize;
            out.push(t["stringArray"][name].as_str().unwrap().to_owned());
            match t["stackTable"]["prefix"][s].as_u64() {
                Some(p) => s = p as usize,
                None => break,
            }
        }
        out.reverse();
        out
    }

    #[test]
    fn frames_are_named_with_inlined_functions_as_frames_of_their_own() {
        let mut p = profile();
        let named = symbolize(&mut p, |lib, a| {
            assert_eq!(lib, 0);
            match a {
                16 => vec![line("main")],
                32 => vec![line("helper"), line("work")],
                _ => Vec::new(),
            }
        })
        .unwrap();
        assert_eq!(
            named,
            Named {
                frames: 2,
                named: 2,
                inlined: 1
            }
        );
        assert_eq!(p["meta"]["symbolicated"], Value::Bool(true));
        let t = &p["threads"][0];
        let s = t["samples"]["stack"][0].as_u64().unwrap() as usize;
        assert_eq!(stack_names(t, s), ["main", "work", "helper"]);
        let cause = t["markers"]["data"][0]["cause"]["stack"].as_u64().unwrap() as usize;
        assert_eq!(cause, s);
        let idle = t["samples"]["stack"][2].as_u64().unwrap() as usize;
        assert_eq!(stack_names(t, idle), ["idle"]);
        // The inlined frame counts its depth from the outermost.
        let f = t["stackTable"]["frame"][s].as_u64().unwrap() as usize;
        assert_eq!(t["frameTable"]["inlineDepth"][f], 1);
        assert_eq!(t["frameTable"]["line"][f], 7);
        assert_eq!(
            t["frameTable"]["length"],
            t["frameTable"]["func"].as_array().unwrap().len()
        );
        assert_eq!(t["stackTable"]["length"], 4);
    }

    #[test]
    fn the_written_profile_starts_with_meta_and_reads_back() {
        let p = profile();
        let text = to_json(&p).unwrap();
        assert!(
            text.starts_with(b"{\"meta\":"),
            "{}",
            String::from_utf8_lossy(&text)
        );
        assert_eq!(serde_json::from_slice::<Value>(&text).unwrap(), p);
    }

    #[test]
    fn nothing_named_leaves_the_profile_as_it_was() {
        let mut p = profile();
        let before = p.clone();
        let named = symbolize(&mut p, |_, _| Vec::new()).unwrap();
        assert_eq!(named.named, 0);
        assert_eq!(p["meta"], before["meta"]);
        assert_eq!(p["threads"][0]["samples"], before["threads"][0]["samples"]);
    }

    #[test]
    fn a_prefix_after_its_stack_is_an_error_not_a_panic() {
        let mut p = profile();
        p["threads"][0]["stackTable"]["prefix"] = serde_json::json!([1, null, null]);
        assert!(symbolize(&mut p, |_, _| vec![line("x")]).is_err());
        let mut p = profile();
        p["threads"][0]["frameTable"] = serde_json::json!({"func": "no"});
        assert!(symbolize(&mut p, |_, _| Vec::new()).is_err());
    }
}
