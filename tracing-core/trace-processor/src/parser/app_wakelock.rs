//! Android's app wakelocks (`TracePacket.app_wakelock_bundle`, field 116):
//! each event, queued on its own by the loader (`load/app_wakelock_queue.rs`)
//! with its wakelock description's interned id (read here from the
//! sequence's interned data), opens or closes a slice named by the
//! wakelock's tag on the `app_wakelock_events` async tracks, as upstream's
//! module makes them. The events carry no cookie: an acquire and its
//! release are paired by the description's tag, flags, owner pid and uid
//! and work uid. The slice's args are the flags and whichever of the owner
//! pid, owner uid and work uid the description gives.

use std::hash::{DefaultHasher, Hash, Hasher};

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `TracePacket.app_wakelock_bundle`.
const APP_WAKELOCK_BUNDLE: u32 = 116;
/// `InternedData.app_wakelock_info`.
const INTERNED_APP_WAKELOCK_INFO: u32 = 42;
/// The async tracks' pool, name and classification.
const TRACKS: &str = "app_wakelock_events";

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(APP_WAKELOCK_BUNDLE, import)];

/// An `AppWakelockInfo`'s fields.
#[derive(Default, Hash)]
struct Info<'a> {
    tag: &'a [u8],
    flags: i32,
    owner_pid: Option<i32>,
    owner_uid: Option<i32>,
    work_uid: Option<i32>,
}

impl<'a> Info<'a> {
    fn decode(bytes: &'a [u8]) -> Self {
        let mut info = Info::default();
        for f in Decoder::new(bytes).map_while(Result::ok) {
            let int = || f.as_i32().ok();
            match f.id {
                2 => info.tag = f.as_bytes().unwrap_or_default(),
                3 => info.flags = int().unwrap_or(0),
                4 => info.owner_pid = int(),
                5 => info.owner_uid = int(),
                6 => info.work_uid = int(),
                _ => {}
            }
        }
        info
    }

    /// The cookie pairing an acquire with its release (absent values as
    /// their defaults, as upstream reads them).
    fn cookie(&self) -> i64 {
        let mut h = DefaultHasher::new();
        (
            self.tag,
            self.flags,
            self.owner_pid.unwrap_or(0),
            self.owner_uid.unwrap_or(0),
            self.work_uid.unwrap_or(0),
        )
            .hash(&mut h);
        h.finish() as i64
    }
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let d = Decoder::new(input.bytes);
    let iid = d.find_last(1).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let info = input
        .generation
        .interned(INTERNED_APP_WAKELOCK_INFO, iid)
        .unwrap_or_default();
    let acquired = d
        .find_last(4)
        .and_then(|f| f.as_bool().ok())
        .unwrap_or(false);
    let info = Info::decode(info);
    let cookie = info.cookie();
    let key = format!("{TRACKS}:{}", p.machine);
    if !acquired {
        if let Some(track) = p.async_tracks.end(&key, cookie) {
            p.slices.end(&mut p.storage, track, input.ts, None);
        }
        return;
    }
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    let track_id = async_tracks.begin(&key, cookie, |idx| {
        let mut spec = TrackSpec::new(Some(TRACKS), TRACKS, EventType::Slice);
        spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(i64::from(idx)))];
        tracks.create(storage, &spec)
    });
    let mut b = ArgSetBuilder::default();
    let optional = [
        ("owner_pid", info.owner_pid),
        ("owner_uid", info.owner_uid),
        ("work_uid", info.work_uid),
    ];
    for (k, v) in [("flags", Some(info.flags))].into_iter().chain(optional) {
        if let Some(v) = v {
            let k = p.storage.strings.intern(k);
            b.add(k, k, ArgValue::Int(i64::from(v)));
        }
    }
    let arg_set_id = p.storage.args.add_set(&b);
    let name = p.storage.strings.intern(&String::from_utf8_lossy(info.tag));
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: input.ts,
            dur: -1,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}
