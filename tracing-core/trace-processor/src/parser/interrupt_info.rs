//! `interrupt_info` (TracePacket field 130): the IRQs the system listed
//! (`/proc/interrupts`), each number with its name, into
//! `_linux_interrupt_mapping` (read by the `linux.irqs` module). An IRQ
//! listed again on the same machine, or without its number or name, is
//! skipped, as upstream skips it. The field numbers are those of upstream's
//! `system_info/interrupt_info.proto`, read with protozero's schema-less
//! decoder.

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::hash::HashSet;
use crate::storage::sched_rows::InterruptMappingRow;

/// `TracePacket.interrupt_info`.
const INTERRUPT_INFO: u32 = 130;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(INTERRUPT_INFO, import)];

/// The IRQs listed so far, per machine.
#[derive(Debug, Default)]
pub struct InterruptMappings {
    seen: HashSet<(u32, u32)>,
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let mut d = Decoder::new(input.bytes);
    while let Some(Ok(f)) = d.read_field() {
        if f.id != 1 {
            continue;
        }
        let Ok(mapping) = f.as_bytes() else { continue };
        let m = Decoder::new(mapping);
        let irq = m.find_last(1).and_then(|f| f.as_u32().ok());
        let name = m.find_last(2).and_then(|f| f.as_bytes().ok());
        let (Some(irq), Some(name)) = (irq, name) else {
            continue;
        };
        if !p.interrupt_mappings.seen.insert((p.machine, irq)) {
            continue;
        }
        let name = p.storage.strings.intern(&String::from_utf8_lossy(name));
        p.storage
            .sched
            .interrupt_mappings
            .push(InterruptMappingRow {
                irq_id: irq,
                name,
                machine_id: Some(p.machine),
            });
    }
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::TracePacket;

    #[test]
    fn each_irq_is_listed_once_with_its_name() {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            let mut info = p.message().begin_nested(super::INTERRUPT_INFO);
            for (irq, name) in [(Some(11), Some("arch_timer")), (Some(9), Some("vgic"))] {
                let mut m = info.begin_nested(1);
                if let Some(irq) = irq {
                    m.append_uint32(1, irq);
                }
                if let Some(name) = name {
                    m.append_string(2, name);
                }
            }
            // Again, and incomplete: skipped.
            info.begin_nested(1).append_uint32(1, 11);
            let mut again = info.begin_nested(1);
            again.append_uint32(1, 9);
            again.append_string(2, "other");
            drop(again);
            info.begin_nested(1).append_string(2, "no number");
        }
        let p = w.finish().expect("writer");
        let mut t = vec![0x0a, p.len() as u8];
        t.extend_from_slice(&p);
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        let rows = tp
            .query(
                "INCLUDE PERFETTO MODULE linux.irqs; \
                 SELECT id, irq_id, name, machine_id FROM linux_interrupt_mapping ORDER BY irq_id",
            )
            .expect("query")
            .rows;
        assert_eq!(
            rows,
            vec![
                vec![
                    Value::Int(1),
                    Value::Int(9),
                    Value::Text("vgic".to_owned()),
                    Value::Int(0)
                ],
                vec![
                    Value::Int(0),
                    Value::Int(11),
                    Value::Text("arch_timer".to_owned()),
                    Value::Int(0)
                ],
            ]
        );
    }
}
