//! `/proc/cpuinfo`: blocks of `key\t: value` lines, one per CPU, each
//! opened by `processor`; the CPU's name is `model name` (x86) or
//! `Processor` (32-bit ARM, where older kernels print it once for all).

use super::ProcError;

const FILE: &str = "/proc/cpuinfo";

/// One CPU's block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuEntry {
    /// The `processor` number.
    pub index: u32,
    /// Its name, if the file gives one.
    pub name: Option<String>,
}

/// Parses `/proc/cpuinfo`.
pub fn parse(bytes: &[u8]) -> Result<Vec<CpuEntry>, ProcError> {
    let text = String::from_utf8_lossy(bytes);
    let mut cpus: Vec<CpuEntry> = Vec::new();
    let mut global_name: Option<String> = None;
    for (key, value) in super::key_values(&text, ':') {
        match key {
            "processor" => {
                let index = value
                    .parse()
                    .map_err(|_| ProcError::malformed(FILE, format!("processor {value:?}")))?;
                cpus.push(CpuEntry { index, name: None });
            }
            "model name" | "Processor" => match cpus.last_mut() {
                Some(cpu) if cpu.name.is_none() => cpu.name = Some(value.to_owned()),
                Some(_) => {}
                None => global_name = Some(value.to_owned()),
            },
            _ => {}
        }
    }
    if cpus.is_empty() {
        return Err(ProcError::malformed(FILE, "no processor line"));
    }
    for cpu in &mut cpus {
        if cpu.name.is_none() {
            cpu.name.clone_from(&global_name);
        }
    }
    Ok(cpus)
}
