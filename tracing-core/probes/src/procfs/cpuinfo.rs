//! `/proc/cpuinfo`: blocks of `key\t: value` lines, one per CPU, each
//! opened by `processor`; the CPU's name is `model name` (x86) or
//! `Processor` (32-bit ARM, where older kernels print it once for all);
//! ARM CPUs also name their implementer, architecture, variant, part and
//! revision.

use super::ProcError;

const FILE: &str = "/proc/cpuinfo";

/// An ARM CPU's identification (`CPU implementer` ... `CPU revision`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArmIds {
    /// `CPU implementer`.
    pub implementer: Option<u32>,
    /// `CPU architecture`.
    pub architecture: Option<u32>,
    /// `CPU variant`.
    pub variant: Option<u32>,
    /// `CPU part`.
    pub part: Option<u32>,
    /// `CPU revision`.
    pub revision: Option<u32>,
}

impl ArmIds {
    /// All five, when the block gives all five (as upstream requires).
    pub fn complete(&self) -> Option<[u32; 5]> {
        Some([
            self.implementer?,
            self.architecture?,
            self.variant?,
            self.part?,
            self.revision?,
        ])
    }
}

/// One CPU's block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuEntry {
    /// The `processor` number.
    pub index: u32,
    /// Its name, if the file gives one.
    pub name: Option<String>,
    /// ARM identification fields, where given.
    pub arm: ArmIds,
}

/// A number as cpuinfo prints it: `0x41` or `8`.
fn number(value: &str) -> Option<u32> {
    match value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))
    {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    }
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
                cpus.push(CpuEntry {
                    index,
                    ..CpuEntry::default()
                });
            }
            "model name" | "Processor" => match cpus.last_mut() {
                Some(cpu) if cpu.name.is_none() => cpu.name = Some(value.to_owned()),
                Some(_) => {}
                None => global_name = Some(value.to_owned()),
            },
            "CPU implementer" | "CPU architecture" | "CPU variant" | "CPU part"
            | "CPU revision" => {
                if let Some(cpu) = cpus.last_mut() {
                    let slot = match key {
                        "CPU implementer" => &mut cpu.arm.implementer,
                        "CPU architecture" => &mut cpu.arm.architecture,
                        "CPU variant" => &mut cpu.arm.variant,
                        "CPU part" => &mut cpu.arm.part,
                        _ => &mut cpu.arm.revision,
                    };
                    *slot = number(value);
                }
            }
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
