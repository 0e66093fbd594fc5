//! A query's answer read back from the wire, as the Python client reads
//! it: the `QueryResult` messages of one answer concatenated decode as one
//! message (their batches in order), and each batch's cells take their
//! values from the field of their type, strings split at NUL.

use zerotrace_protos::protos::QueryResultDecoder;
use zerotrace_protos::protos::query_result::cells_batch::CellType;

use crate::Value;

/// A decoded query answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecodedResult {
    /// The column names.
    pub columns: Vec<String>,
    /// The rows, each as long as `columns`.
    pub rows: Vec<Vec<Value>>,
    /// The error, when the query failed.
    pub error: Option<String>,
    /// How many batches came.
    pub batches: usize,
    /// Whether the last batch came marked as last (and no batch after it).
    pub complete: bool,
}

/// Decodes the concatenated `QueryResult` messages of one answer (a
/// `/query` body). Malformed bytes are an error naming what is wrong.
pub fn decode_query_result(bytes: &[u8]) -> Result<DecodedResult, String> {
    let r = QueryResultDecoder::try_new(bytes).map_err(|e| format!("QueryResult: {e:?}"))?;
    let mut out = DecodedResult {
        columns: r.column_names().map(str::to_owned).collect(),
        error: r.error().map(str::to_owned).filter(|e| !e.is_empty()),
        ..DecodedResult::default()
    };
    let width = out.columns.len();
    let mut row = Vec::with_capacity(width);
    for b in r.batch() {
        if out.complete {
            return Err("a batch after the last one".into());
        }
        out.batches += 1;
        let mut ints = b.varint_cells();
        let mut reals = b.float64_cells();
        let mut blobs = b.blob_cells();
        let strings = b.string_cells_bytes().unwrap_or_default();
        let mut strings = strings.split(|&c| c == 0);
        for t in b.cells() {
            let v = match t {
                CellType::CellNull => Value::Null,
                CellType::CellVarint => Value::Int(ints.next().ok_or("too few varint cells")?),
                CellType::CellFloat64 => Value::Real(reals.next().ok_or("too few float64 cells")?),
                CellType::CellString => Value::Text(
                    String::from_utf8_lossy(strings.next().ok_or("too few string cells")?)
                        .into_owned(),
                ),
                CellType::CellBlob => {
                    Value::Blob(blobs.next().ok_or("too few blob cells")?.to_vec())
                }
                CellType::CellInvalid => return Err("an invalid cell".into()),
            };
            row.push(v);
            if row.len() == width {
                out.rows
                    .push(std::mem::replace(&mut row, Vec::with_capacity(width)));
            }
        }
        if !row.is_empty() {
            return Err("a batch ends inside a row".into());
        }
        out.complete = b.is_last_batch().unwrap_or(false);
    }
    Ok(out)
}
