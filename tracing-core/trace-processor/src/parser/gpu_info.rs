//! The GPUs a trace describes (`gpu_info`, TracePacket field 128) into
//! `__intrinsic_gpu`, as upstream reads them: the n-th GPU of the list is
//! GPU n of the packet's machine; its name, vendor, model, architecture,
//! PCI location and UUID (hex) fill its row where given, and its
//! vendor-specific key/value pairs become the row's args.

use super::Parser;
use super::fields::Fields;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::storage::args::{ArgSetBuilder, ArgValue};

/// TracePacket.gpu_info.
const GPU_INFO: u32 = 128;

/// The packets this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(GPU_INFO, gpu_info)];

/// A non-empty string interned (an empty one leaves the column as it is).
fn text(p: &mut Parser, s: Option<&[u8]>) -> Option<StrId> {
    let s = s.filter(|s| !s.is_empty())?;
    Some(p.storage.strings.intern(&String::from_utf8_lossy(s)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn gpu_info(p: &mut Parser, input: &Input<'_>) {
    let gpus = protozero::Decoder::new(input.bytes)
        .map_while(Result::ok)
        .filter(|f| f.id == 1)
        .filter_map(|f| f.as_bytes().ok());
    for (index, g) in gpus.enumerate() {
        let f = Fields::new(g);
        let ugpu = p.gpus.ugpu(
            &mut p.storage,
            p.machine,
            u32::try_from(index).unwrap_or(u32::MAX),
        );
        let name = text(p, f.bytes(1));
        let vendor = text(p, f.bytes(2));
        let model = text(p, f.bytes(3));
        let architecture = text(p, f.bytes(4));
        let uuid = f.bytes(5).map(hex);
        let uuid = text(p, uuid.as_deref().map(str::as_bytes));
        let pci_bdf = text(p, f.bytes(7));
        let mut b = ArgSetBuilder::default();
        for kv in protozero::Decoder::new(g)
            .map_while(Result::ok)
            .filter(|f| f.id == 6)
            .filter_map(|f| f.as_bytes().ok())
        {
            let kv = Fields::new(kv);
            if let (Some(k), Some(v)) = (kv.str(1), kv.str(2)) {
                let k = p.storage.strings.intern(&k);
                let v = p.storage.strings.intern(&v);
                b.add(k, k, ArgValue::String(v));
            }
        }
        let args = p.storage.args.add_set(&b);
        let Some(row) = p.storage.gpu.gpus.get_mut(ugpu as usize) else {
            continue;
        };
        for (col, v) in [
            (&mut row.name, name),
            (&mut row.vendor, vendor),
            (&mut row.model, model),
            (&mut row.architecture, architecture),
            (&mut row.uuid, uuid),
            (&mut row.pci_bdf, pci_bdf),
        ] {
            if let Some(v) = v {
                *col = v;
            }
        }
        if args.is_some() {
            row.arg_set_id = args;
        }
    }
}
