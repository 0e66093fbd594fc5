//! The two front ends side by side on a whole corpus: the pure one (protox,
//! the default) and `protoc`. Every file's descriptor must be the same byte
//! for byte, and so must the generated code. A `google/protobuf` file that
//! no include directory holds is each front end's own copy, and is left out
//! of the comparison.

use std::time::{Duration, Instant};

use protozero_codegen::parse::{FrontEnd, parse_files};
use protozero_codegen::{DEFAULT_HEADER, generate_rust};

use super::CorpusError;

/// What the comparison found.
pub struct Comparison {
    /// Files whose descriptors were compared.
    pub files: usize,
    /// protoc's parse time.
    pub protoc_time: Duration,
    /// The first difference, if any.
    pub difference: Option<String>,
}

/// The length-delimited fields numbered `id` at the top of `b`, in order;
/// `None` if `b` is not a well-formed message.
fn fields(b: &[u8], id: u32) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    for f in protozero::Decoder::new(b) {
        let f = f.ok()?;
        if f.id == id {
            if let Ok(bytes) = f.as_bytes() {
                out.push(bytes);
            }
        }
    }
    Some(out)
}

/// Each file of an encoded `FileDescriptorSet`, by name.
fn files_of(set: &[u8]) -> Option<Vec<(String, &[u8])>> {
    fields(set, 1)?
        .into_iter()
        .map(|f| {
            let name = fields(f, 1)?.pop()?;
            Some((String::from_utf8_lossy(name).into_owned(), f))
        })
        .collect()
}

/// Compares the pure front end's descriptors (`pure_set`, encoded) and
/// generated code (`pure_code`) of `inputs` with protoc's.
pub fn compare(
    includes: &[std::path::PathBuf],
    inputs: &[std::path::PathBuf],
    pure_set: &[u8],
    pure_code: &protozero_codegen::Generated,
) -> Result<Comparison, CorpusError> {
    let started = Instant::now();
    let parsed = parse_files(includes, inputs, &FrontEnd::Protoc(None))?;
    let protoc_time = started.elapsed();
    let protoc_set = parsed.descriptors.to_bytes()?;
    let protoc_code = generate_rust(&parsed.schema, DEFAULT_HEADER, "mod.rs", None)?;
    let compared = |name: &str| {
        !name.starts_with("google/protobuf/") || includes.iter().any(|d| d.join(name).is_file())
    };
    let (Some(pure), Some(protoc)) = (files_of(pure_set), files_of(&protoc_set)) else {
        return Err(CorpusError::Locate(
            "a front end's descriptors do not decode".to_owned(),
        ));
    };
    let pure: Vec<_> = pure.into_iter().filter(|(n, _)| compared(n)).collect();
    let protoc: Vec<_> = protoc.into_iter().filter(|(n, _)| compared(n)).collect();
    let mut difference = None;
    let names = |v: &[(String, &[u8])]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    if names(&pure) != names(&protoc) {
        difference = Some(format!(
            "the front ends compile different files: pure {} files, protoc {}",
            pure.len(),
            protoc.len()
        ));
    } else if let Some((name, _)) = pure
        .iter()
        .zip(&protoc)
        .find(|(a, b)| a.1 != b.1)
        .map(|(a, _)| a)
    {
        difference = Some(format!("the descriptors of {name} differ"));
    } else {
        let code = |g: &[protozero_codegen::GeneratedFile]| {
            g.iter()
                .filter(|f| {
                    !f.path.starts_with("google/protobuf")
                        || f.path
                            .to_str()
                            .and_then(|p| p.strip_suffix(".rs"))
                            .is_some_and(|stem| compared(&format!("{stem}.proto")))
                })
                .map(|f| (f.path.clone(), f.contents.clone()))
                .collect::<Vec<_>>()
        };
        let (a, b) = (code(&pure_code.files), code(&protoc_code));
        if let Some(((path, _), _)) = a.iter().zip(&b).find(|(x, y)| x != y) {
            difference = Some(format!("the code generated for {} differs", path.display()));
        } else if a.len() != b.len() {
            difference = Some("the front ends generate different files".to_owned());
        }
    }
    Ok(Comparison {
        files: pure.len(),
        protoc_time,
        difference,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_split_by_name_and_bad_bytes_refused() {
        // FileDescriptorSet { file { name: "a" package: "p" } file { name: "b" } }
        let set = [
            0x0a, 6, 0x0a, 1, b'a', 0x12, 1, b'p', 0x0a, 3, 0x0a, 1, b'b',
        ];
        let files = files_of(&set).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].0, "a");
        assert_eq!(files[0].1, &set[2..8]);
        assert_eq!(files[1].0, "b");
        assert!(files_of(&[0x0a, 9, 0x0a]).is_none());
        assert!(files_of(&[0x0b]).is_none());
    }
}
