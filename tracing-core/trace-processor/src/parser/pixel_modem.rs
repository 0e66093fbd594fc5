//! Pixel modem events (`TracePacket.pixel_modem_events`, field 110): each
//! event, queued on its own by the loader (`load/pixel_modem_queue.rs`), is
//! detokenized with the trace's token database (`pigweed_detokenizer.rs`;
//! without one every event is `Token not found`) and becomes an instant,
//! as upstream's pixel modem parser makes it. The modem's messages carry
//! `■key♦value` pairs: the `domain` names the track (`Pixel Modem Events:
//! <domain>`, or `Pixel Modem Events` without one) and the `format`, when
//! present, names the slice (else the whole message does). The args are
//! the format string (`raw_template`), the token (`token_id`,
//! `token_id_hex`), the packet's time (`packet_ts`) and each argument
//! (`pw_token_<token>.arg_<i>`). A message that does not detokenize (cut
//! short, a number too long) is skipped, as upstream skips it.

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use super::pigweed_detokenizer::{self, Detokenizer};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `TracePacket.pixel_modem_events`.
const PIXEL_MODEM_EVENTS: u32 = 110;
/// The key-value pairs' delimiters in a modem message.
const KEY_START: &str = "\u{25A0}";
const KEY_END: &str = "\u{2666}";

/// `TracePacket.pixel_modem_token_database`.
const PIXEL_MODEM_TOKEN_DATABASE: u32 = 111;

/// The payloads this module imports. The token database is read by the
/// loader as it arrives (`load/pixel_modem_queue.rs`); it is listed so
/// that the packet's walk takes it as the payload, and never reaches here.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (PIXEL_MODEM_EVENTS, import),
    (PIXEL_MODEM_TOKEN_DATABASE, |_, _| {}),
];

/// The token database read so far.
#[derive(Debug, Default)]
pub struct PixelModemState {
    /// The detokenizer (empty until a database packet is read).
    pub detokenizer: Detokenizer,
}

/// The non-empty pieces of `text` between `delimiter`s.
fn split<'a>(text: &'a str, delimiter: &str) -> impl Iterator<Item = &'a str> {
    text.split(delimiter).filter(|s| !s.is_empty())
}

/// The message's `■key♦value` pairs (the first of each key kept).
fn pairs(message: &str) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for piece in split(message, KEY_START) {
        let mut kv = split(piece, KEY_END);
        if let (Some(k), Some(v)) = (kv.next(), kv.next()) {
            if !out.iter().any(|(key, _)| *key == k) {
                out.push((k, v));
            }
        }
    }
    out
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let d = Decoder::new(input.bytes);
    let Some(event) = d.find_last(1).and_then(|f| f.as_bytes().ok()) else {
        return;
    };
    let packet_ts = d.find_last(3).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let Ok(detokenized) = p.pixel_modem.detokenizer.detokenize(event) else {
        return;
    };
    let message = detokenized.format();
    let map = pairs(&message);
    let find = |key: &str| map.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let domain = find("domain").unwrap_or("");
    let name = find("format").unwrap_or(&message);
    let track_name = if domain.is_empty() {
        "Pixel Modem Events".to_owned()
    } else {
        format!("Pixel Modem Events: {domain}")
    };
    let mut spec = TrackSpec::new(Some(&track_name), "pixel_modem_event", EventType::Slice);
    spec.dimensions = vec![(
        "modem_domain",
        ArgValue::String(p.storage.strings.intern(domain)),
    )];
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    let name = p.storage.strings.intern(name);
    let token = detokenized.token;
    let mut b = ArgSetBuilder::default();
    let mut add = |p: &mut Parser, key: &str, value: ArgValue| {
        let k = p.storage.strings.intern(key);
        b.add(k, k, value);
    };
    let template = p.storage.strings.intern(detokenized.template());
    add(p, "raw_template", ArgValue::String(template));
    add(p, "token_id", ArgValue::Int(i64::from(token)));
    let hex = p.storage.strings.intern(&format!("0x{token:02x}"));
    add(p, "token_id_hex", ArgValue::String(hex));
    add(p, "packet_ts", ArgValue::Uint(packet_ts));
    for (i, arg) in detokenized.args.iter().enumerate() {
        let value = match *arg {
            pigweed_detokenizer::ArgValue::Int(v) => ArgValue::Int(v),
            pigweed_detokenizer::ArgValue::Uint(v) => ArgValue::Uint(v),
            pigweed_detokenizer::ArgValue::Real(v) => ArgValue::Real(v),
        };
        add(p, &format!("pw_token_{token}.arg_{i}"), value);
    }
    let arg_set_id = p.storage.args.add_set(&b);
    p.slices.instant(
        &mut p.storage,
        SliceRow {
            ts: input.ts,
            dur: 0,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}
