//! Android's battery stats checkin text (`dumpsys batterystats -c`, on its
//! own or as a dumpstate section), as Perfetto imports it. Lines start
//! with `9,`: `9,0,i,vers,N,...` gives the format's version, `9,hsp,I,UID,"s"`
//! fills the history string pool, `9,h,DELTA,item,...` are history items
//! `DELTA` ms after the previous line (a `:TIME:` line sets the Unix time
//! in ms). Each item, once the items are in time order, becomes:
//! an event (`Etp=3`) a zero-length slice on its `battery_stats.<event>`
//! track named by the event, the pool entry's uid and string; a state
//! (`+S`, `-w`, `Pcn=lte`) a `battery_stats.<state>` counter (the screen
//! also the `ScreenState` counter: 2 on, 1 off); battery readings (`Bl`,
//! `Bcc`, `Bv`, `Bs`, `Bp`) battery counters; wake locks (`+w=I`/`-w=I`,
//! version 36 on) slices on the shared `WakeLocks` tracks, one per pool
//! index at a time. Items of no known kind are read past, as upstream
//! reads past them.

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::parser::android_system_property::{battery_stats_track, screen_state_track};
use crate::storage::args::ArgValue;
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// The wake lock tracks' pool (`track_compressor.rs`'s key).
const WAKELOCKS: &str = "dumpstate_wakelocks";

/// A history item waiting for its import: Unix ns and its text.
#[derive(Debug)]
pub struct Item {
    /// Unix time, ns.
    pub ts: i64,
    /// The item's text (`+w=3`, `Bl=100`, ...).
    pub text: String,
}

/// The checkin lines read so far.
#[derive(Debug, Default)]
pub struct BatteryStats {
    /// History string pool: index → (uid, string).
    pool: HashMap<i64, (i32, String)>,
    version: u32,
    now_ms: i64,
    /// The history items, in file order.
    pub items: Vec<Item>,
    /// Bytes of their texts.
    pub item_bytes: u64,
    /// Pool strings interned so far, by index.
    names: HashMap<i64, StrId>,
}

fn int(s: &str) -> Result<i64, String> {
    s.trim()
        .parse::<i64>()
        .map_err(|_| format!("{s:?} is no integer"))
}

impl BatteryStats {
    /// One checkin line; an error for a line upstream refuses too.
    pub fn line(&mut self, line: &str) -> Result<(), String> {
        let mut tokens = line.split(',').filter(|t| !t.is_empty());
        if tokens.next() != Some("9") {
            return Err("a battery stats checkin line that does not start with 9".into());
        }
        match tokens.next() {
            Some("hsp") => {
                let index = int(tokens.next().unwrap_or(""))?;
                let Some(uid) = tokens.next().and_then(|t| t.trim().parse::<i32>().ok()) else {
                    // A redacted uid ("[PHONE_NUMBER]").
                    return Ok(());
                };
                // The quoted string is the rest of the line, commas and all.
                let rest = line.splitn(5, ',').nth(4).unwrap_or("");
                let start = rest.find('"').map_or(0, |i| i + 1);
                let end = rest
                    .rfind('"')
                    .filter(|&e| e >= start)
                    .unwrap_or(rest.len());
                if index >= 0 {
                    let s = rest.get(start..end).unwrap_or("").to_owned();
                    self.pool.insert(index, (uid, s));
                }
            }
            Some("h") => {
                let t = tokens.next().unwrap_or("");
                if let Some(i) = t.find(":TIME:") {
                    self.now_ms = int(t.get(i + ":TIME:".len()..).unwrap_or(""))?;
                    return Ok(());
                }
                if t.contains(":START") || t.contains(":SHUTDOWN") {
                    return Ok(());
                }
                self.now_ms = self.now_ms.saturating_add(int(t)?);
                let ts = self.now_ms.saturating_mul(1_000_000);
                for item in tokens {
                    self.item_bytes = self.item_bytes.saturating_add(item.len() as u64);
                    self.items.push(Item {
                        ts,
                        text: item.to_owned(),
                    });
                }
            }
            Some("0") if tokens.next() == Some("i") && tokens.next() == Some("vers") => {
                let v = int(tokens.next().unwrap_or(""))?;
                self.version = u32::try_from(v).unwrap_or(0);
            }
            _ => {}
        }
        Ok(())
    }

    /// The pool's uid and string at `index` (-1 and empty when absent).
    fn pool_entry(&self, index: i64) -> (i32, &str) {
        self.pool
            .get(&index)
            .map_or((-1, ""), |(uid, s)| (*uid, s.as_str()))
    }

    /// Imports the items in time order.
    pub fn import(mut self, p: &mut Parser) {
        let mut items = std::mem::take(&mut self.items);
        items.sort_by_key(|i| i.ts);
        for item in &items {
            p.storage.work.step(1);
            self.item(p, item);
        }
    }

    /// One history item; read past when of no known kind.
    fn item(&mut self, p: &mut Parser, item: &Item) {
        let mut parts = item.text.split('=').filter(|t| !t.is_empty());
        let mut key = parts.next().unwrap_or("");
        let value = parts.next().unwrap_or("");
        let mut prefix = "";
        if let Some(k) = key.strip_prefix('+') {
            (prefix, key) = ("+", k);
        } else if let Some(k) = key.strip_prefix('-') {
            (prefix, key) = ("-", k);
        }
        let ts = item.ts;
        if key.starts_with('E') {
            self.event(p, ts, prefix, key, value);
            return;
        }
        if !prefix.is_empty() && value.is_empty() {
            // Wake locks are slices only, as in battery stats' atrace.
            if key == "w" {
                return;
            }
            let Some((name, _)) = state(key) else {
                return;
            };
            let on = prefix == "+";
            let track = battery_stats_track(p, &format!("battery_stats.{name}"));
            counter(p, track, ts, if on { 1.0 } else { 0.0 });
            if name == "screen" {
                let track = screen_state_track(p);
                counter(p, track, ts, if on { 2.0 } else { 1.0 });
            }
            return;
        }
        if prefix.is_empty() && !value.is_empty() {
            if let Some((name, values)) = state(key) {
                let v = value
                    .parse::<i64>()
                    .ok()
                    .or_else(|| values.iter().find(|(s, _)| *s == value).map(|(_, v)| *v));
                if let Some(v) = v {
                    let track = battery_stats_track(p, &format!("battery_stats.{name}"));
                    counter(p, track, ts, v as f64);
                    return;
                }
            }
            if key.starts_with('B') && battery(p, ts, key, value) {
                return;
            }
        }
        if !prefix.is_empty() && key == "w" && !value.is_empty() && self.version >= 36 {
            self.wakelock(p, ts, prefix == "+", value);
        }
    }

    /// An event item: a zero-length slice on its event's track.
    fn event(&self, p: &mut Parser, ts: i64, prefix: &str, key: &str, value: &str) {
        let Some(name) = event_name(key) else {
            return;
        };
        let Ok(index) = value.trim().parse::<i64>() else {
            return;
        };
        let (uid, s) = self.pool_entry(index);
        // At most what the name keeps of it (a long pool string is not
        // copied whole for each event).
        let mut cut = s.len().min(254);
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        let s = s.get(..cut).unwrap_or("");
        let mut slice_name = format!("{prefix}{name}={uid}:\"{s}\"");
        // Upstream writes the name into 255 bytes.
        if slice_name.len() > 254 {
            let mut cut = 254;
            while !slice_name.is_char_boundary(cut) {
                cut -= 1;
            }
            slice_name.truncate(cut);
        }
        let track_name = format!("battery_stats.{name}");
        let item = p.storage.strings.intern(name);
        let mut spec = TrackSpec::new(Some(&track_name), "battery_stats", EventType::Slice);
        spec.dimensions = vec![("bstats_item_name", ArgValue::String(item))];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        let name = p.storage.strings.intern(&slice_name);
        p.slices.begin(
            &mut p.storage,
            SliceRow {
                ts,
                dur: 0,
                track_id: track,
                name,
                ..Default::default()
            },
        );
    }

    /// A wake lock taken (`+w=I`) or released (`-w=I`): a slice per pool
    /// index on the shared `WakeLocks` tracks.
    fn wakelock(&mut self, p: &mut Parser, ts: i64, take: bool, value: &str) {
        let Ok(index) = value.trim().parse::<i64>() else {
            return;
        };
        if take {
            // Each pool string is interned once, however many locks name it.
            let name = match self.names.get(&index) {
                Some(n) => *n,
                None => {
                    let n = p.storage.strings.intern(self.pool_entry(index).1);
                    self.names.insert(index, n);
                    n
                }
            };
            let Parser {
                async_tracks,
                tracks,
                storage,
                ..
            } = p;
            let track = async_tracks.begin(WAKELOCKS, index, |idx| {
                let mut spec = TrackSpec::new(Some("WakeLocks"), WAKELOCKS, EventType::Slice);
                spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(i64::from(idx)))];
                tracks.create(storage, &spec)
            });
            p.slices.begin(
                &mut p.storage,
                SliceRow {
                    ts,
                    dur: -1,
                    track_id: track,
                    name,
                    ..Default::default()
                },
            );
        } else if let Some(track) = p.async_tracks.end(WAKELOCKS, index) {
            p.slices.end(&mut p.storage, track, ts, None);
        }
    }
}

fn counter(p: &mut Parser, track: u32, ts: i64, value: f64) {
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value,
        arg_set_id: OptU32::NONE,
    });
}

/// A battery reading: its counter; false when `key` is none.
fn battery(p: &mut Parser, ts: i64, key: &str, value: &str) -> bool {
    let first = value.chars().next().unwrap_or(' ');
    let (track, v) = match key {
        "Bl" | "Bcc" | "Bv" => {
            let (counter_name, scale) = match key {
                "Bl" => ("capacity_pct", 1),
                "Bcc" => ("charge_uah", 1000),
                _ => ("voltage_uv", 1000),
            };
            let Ok(v) = value.trim().parse::<i64>() else {
                return true;
            };
            let track_name = format!("batt.{counter_name}");
            let battery = p.storage.strings.intern("");
            let counter_key = p.storage.strings.intern(counter_name);
            let mut spec = TrackSpec::new(Some(&track_name), "battery_counter", EventType::Counter);
            spec.dimensions = vec![
                ("battery_name", ArgValue::String(battery)),
                ("counter_name", ArgValue::String(counter_key)),
            ];
            (
                p.tracks.interned_counter(&mut p.storage, &spec),
                v.saturating_mul(scale),
            )
        }
        "Bs" => {
            // BatteryManager's BATTERY_STATUS_* values.
            let v = match first {
                '?' => 1,
                'c' => 2,
                'd' => 3,
                'n' => 4,
                'f' => 5,
                _ => 0,
            };
            let spec = TrackSpec::new(Some("BatteryStatus"), "battery_status", EventType::Counter);
            (p.tracks.interned_counter(&mut p.storage, &spec), v)
        }
        "Bp" => {
            // BatteryManager's BATTERY_PLUGGED_* values.
            let v = match first {
                'a' => 1,
                'u' => 2,
                'w' => 4,
                _ => 0,
            };
            let spec = TrackSpec::new(
                Some("PlugType"),
                "battery_plugged_status",
                EventType::Counter,
            );
            (p.tracks.interned_counter(&mut p.storage, &spec), v)
        }
        _ => return false,
    };
    counter(p, track, ts, v as f64);
    true
}

/// An event's long name (BatteryStats.java's checkin names).
fn event_name(short: &str) -> Option<&'static str> {
    Some(match short {
        "Enl" => "null",
        "Epr" => "proc",
        "Efg" => "fg",
        "Etp" => "top",
        "Esy" => "sync",
        "Ewl" => "wake_lock_in",
        "Ejb" => "job",
        "Eur" => "user",
        "Euf" => "userfg",
        "Ecn" => "conn",
        "Eac" => "active",
        "Epi" => "pkginst",
        "Epu" => "pkgunin",
        "Eal" => "alarm",
        "Est" => "stats",
        "Eai" => "pkginactive",
        "Eaa" => "pkgactive",
        "Etw" => "tmpwhitelist",
        "Esw" => "screenwake",
        "Ewa" => "wakeupap",
        "Elw" => "longwake",
        "Eec" => "est_capacity",
        _ => return None,
    })
}

/// Values of a state given by name.
type Values = &'static [(&'static str, i64)];

const DATA_CONN: Values = &[
    ("oos", 0),
    ("gprs", 1),
    ("edge", 2),
    ("umts", 3),
    ("cdma", 4),
    ("evdo_0", 5),
    ("evdo_A", 6),
    ("1xrtt", 7),
    ("hsdpa", 8),
    ("hsupa", 9),
    ("hspa", 10),
    ("iden", 11),
    ("evdo_b", 12),
    ("lte", 13),
    ("ehrpd", 14),
    ("hspap", 15),
    ("gsm", 16),
    ("td_scdma", 17),
    ("iwlan", 18),
    ("lte_ca", 19),
    ("nr", 20),
    ("emngcy", 21),
    ("other", 22),
];
const PHONE_STATE: Values = &[("in", 0), ("out", 1), ("em", 2), ("off", 3)];
const DEVICE_IDLE: Values = &[("off", 0), ("light", 1), ("full", 2), ("???", 3)];
const WIFI_SUPPL: Values = &[
    ("inv", 0),
    ("dsc", 1),
    ("dis", 2),
    ("inact", 3),
    ("scan", 4),
    ("auth", 5),
    ("ascing", 6),
    ("asced", 7),
    ("4-way", 8),
    ("group", 9),
    ("compl", 10),
    ("dorm", 11),
    ("uninit", 12),
];
const GPS_SIGNAL: Values = &[("poor", 0), ("good", 1), ("none", 2)];

/// A state's long name and its named values (BatteryStats.java's checkin
/// names).
fn state(short: &str) -> Option<(&'static str, Values)> {
    Some(match short {
        "r" => ("running", &[]),
        "w" => ("wake_lock", &[]),
        "s" => ("sensor", &[]),
        "g" => ("gps", &[]),
        "Wl" => ("wifi_full_lock", &[]),
        "Ws" => ("wifi_scan", &[]),
        "Wm" => ("wifi_multicast", &[]),
        "Wr" => ("wifi_radio", &[]),
        "Pr" => ("mobile_radio", &[]),
        "Psc" => ("phone_scanning", &[]),
        "a" => ("audio", &[]),
        "S" => ("screen", &[]),
        "BP" => ("plugged", &[]),
        "Sd" => ("screen_doze", &[]),
        "Pcn" => ("data_conn", DATA_CONN),
        "Pst" => ("phone_state", PHONE_STATE),
        "Pss" => ("phone_signal_strength", &[]),
        "Sb" => ("brightness", &[]),
        "ps" => ("power_save", &[]),
        "v" => ("video", &[]),
        "Ww" => ("wifi_running", &[]),
        "W" => ("wifi", &[]),
        "fl" => ("flashlight", &[]),
        "di" => ("device_idle", DEVICE_IDLE),
        "ch" => ("charging", &[]),
        "Ud" => ("usb_data", &[]),
        "Pcl" => ("phone_in_call", &[]),
        "b" => ("bluetooth", &[]),
        "Wss" => ("wifi_signal_strength", &[]),
        "Wsp" => ("wifi_suppl", WIFI_SUPPL),
        "ca" => ("camera", &[]),
        "bles" => ("ble_scan", &[]),
        "Chtp" => ("cellular_high_tx_power", &[]),
        "Gss" => ("gps_signal_quality", GPS_SIGNAL),
        "nrs" => ("nr_state", &[]),
        _ => return None,
    })
}
