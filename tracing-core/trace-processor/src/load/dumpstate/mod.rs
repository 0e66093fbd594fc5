//! Android bug reports' dumpstate text (`adb bugreport`'s main text file,
//! starting `== dumpstate: <date>`) and battery stats checkin text on its
//! own (starting `9,0,i,vers,`), read line by line as the bytes arrive, as
//! Perfetto reads them: `------ NAME ------` lines open and close the
//! dumpstate sections, `DUMP OF SERVICE name:` lines the dumpsys services
//! within a `DUMPSYS` section; the lines of a `CHECKIN BATTERYSTATS`
//! section, or of a checkin file, go to the battery stats reader
//! (`battery_stats.rs`), whose history is imported in time order at the
//! end. Times are Unix time (the realtime clock). A last line without a
//! line break is not read, as upstream leaves it.
//!
//! Every other line is a row of `android_dumpstate` with its section and
//! service. Not read yet: the log sections (`SYSTEM LOG`, ...) into
//! `android_logs`, and the time zone from the alarm service's dump.

pub mod battery_stats;

use crate::column_store::strings::StrId;
use crate::error::TraceError;
use crate::parser::Parser;
use crate::tables::android::AndroidDumpstateRow;

use super::reader::FormatReader;
use battery_stats::BatteryStats;

/// The first bytes of a checkin file.
pub const CHECKIN_START: &[u8] = b"9,0,i,vers,";
/// The first bytes of a dumpstate file.
pub const DUMPSTATE_START: &[u8] =
    b"========================================================\n== dumpstate: ";

/// The kind of dumpstate section being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Section {
    /// Any other section, or none.
    #[default]
    Other,
    /// `DUMPSYS ...`: services.
    Dumpsys,
    /// `SYSTEM LOG`, `EVENT LOG`, `RADIO LOG`.
    Log,
    /// `CHECKIN BATTERYSTATS`, or a checkin file.
    BatteryStats,
}

/// The streaming reader of dumpstate and checkin text.
#[derive(Debug, Default)]
pub struct DumpstateLoad {
    /// Bytes of the line being read.
    pending: Vec<u8>,
    /// Offset of the line being read.
    offset: u64,
    section: Section,
    /// The name of the section being read (NULL outside one).
    section_name: StrId,
    /// The dumpsys service being read (NULL outside one).
    service: StrId,
    battery: BatteryStats,
}

impl DumpstateLoad {
    /// One line of text.
    fn line(&mut self, p: &mut Parser, line: &str, at: u64) -> Result<(), TraceError> {
        p.storage.work.step(1);
        if let Some(inner) = line
            .strip_prefix("------ ")
            .and_then(|l| l.strip_suffix(" ------"))
        {
            // A section's start, or its end ("... was the duration of ..."),
            // which leaves the kind of section as it was.
            self.service = StrId::NULL;
            if inner.contains("was the duration of") {
                self.section_name = StrId::NULL;
                return Ok(());
            }
            self.section_name = p.storage.strings.intern(inner);
            self.section = if inner.starts_with("DUMPSYS") {
                Section::Dumpsys
            } else if ["SYSTEM LOG", "EVENT LOG", "RADIO LOG"]
                .iter()
                .any(|s| inner.starts_with(s))
            {
                Section::Log
            } else if inner.starts_with("CHECKIN BATTERYSTATS") {
                Section::BatteryStats
            } else {
                if inner.starts_with("BLOCK STAT") {
                    // One section for every block device's stats.
                    self.section_name = p.storage.strings.intern("BLOCK STAT");
                }
                Section::Other
            };
            return Ok(());
        }
        let dumpsys = self.section == Section::Dumpsys;
        if dumpsys && line.starts_with("--------- ") && line.contains("was the duration of dumpsys")
        {
            self.service = StrId::NULL;
            return Ok(());
        }
        if dumpsys
            && self.service.is_null()
            && line.starts_with("----------------------------------------------")
        {
            return Ok(());
        }
        if line.as_bytes().starts_with(CHECKIN_START) {
            self.section = Section::BatteryStats;
        }
        if self.section == Section::Dumpsys && line.starts_with("DUMP OF SERVICE") {
            // DUMP OF SERVICE [CRITICAL|HIGH] name:
            let last = line.rsplit(' ').next().unwrap_or("");
            let name = last.strip_suffix(':').unwrap_or(last);
            self.service = p.storage.strings.intern(name);
        } else if self.section == Section::BatteryStats {
            self.battery
                .line(line)
                .map_err(|message| TraceError::Malformed {
                    format: "android_dumpstate",
                    offset: at,
                    message,
                })?;
        }
        let line = p.storage.strings.intern(line);
        p.storage.android.dumpstate.push(AndroidDumpstateRow {
            section: self.section_name,
            service: self.service,
            line,
        });
        Ok(())
    }
}

impl FormatReader for DumpstateLoad {
    fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        let mut rest = data;
        while let Some(nl) = rest.iter().position(|&c| c == b'\n') {
            let (head, tail) = rest.split_at(nl);
            rest = tail.get(1..).unwrap_or(&[]);
            let at = self.offset;
            let len = (self.pending.len() + head.len() + 1) as u64;
            self.offset = self.offset.saturating_add(len);
            let text = if self.pending.is_empty() {
                String::from_utf8_lossy(head).into_owned()
            } else {
                self.pending.extend_from_slice(head);
                let t = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                t
            };
            self.line(p, &text, at)?;
        }
        self.pending.extend_from_slice(rest);
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        let per = std::mem::size_of::<battery_stats::Item>() as u64;
        per.saturating_mul(self.battery.items.len() as u64)
            .saturating_add(self.battery.item_bytes)
            .saturating_add(self.pending.len() as u64)
    }

    fn finish(self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        self.battery.import(p);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Loader;
    use crate::storage::Storage;

    const CHECKIN: &str = "9,0,i,vers,36,214,AP1A,AP2A\n\
9,hsp,0,10216,\"com.example.app\"\n\
9,hsp,1,1001,\"*radio, lock*\"\n\
9,h,0:RESET:TIME:1700000000000\n\
9,h,0,Bl=90,Bs=d,Bv=4000,+S,Pcn=lte,Etp=0,Bh=g\n\
9,h,10,+w=1\n\
9,h,5,+w=0\n\
9,h,5,-w=1\n\
9,h,20,-S,-w=0\n";

    fn load(step: usize) -> Storage {
        let mut l = Loader::new();
        for c in CHECKIN.as_bytes().chunks(step) {
            l.push(c).unwrap();
        }
        l.finish().unwrap()
    }

    fn counters(st: &Storage, track: &str) -> Vec<(i64, f64)> {
        st.counters
            .iter()
            .filter(|c| st.strings.get(st.tracks[c.track_id as usize].name) == Some(track))
            .map(|c| (c.ts, c.value))
            .collect()
    }

    /// A battery stats checkin file loads: the screen's state as the
    /// `ScreenState` and `battery_stats.screen` counters, named states,
    /// battery readings scaled as upstream scales them, events as slices
    /// named by the string pool, wake locks as slices on the `WakeLocks`
    /// tracks from `+w` to `-w` of their pool index; whatever the chunks.
    #[test]
    fn battery_stats_checkin_lines_become_counters_and_slices() {
        let t0 = 1_700_000_000_000_000_000;
        let ms = 1_000_000;
        for step in [CHECKIN.len(), 1, 9] {
            let st = load(step);
            assert_eq!(
                counters(&st, "ScreenState"),
                [(t0, 2.0), (t0 + 40 * ms, 1.0)]
            );
            assert_eq!(
                counters(&st, "battery_stats.screen"),
                [(t0, 1.0), (t0 + 40 * ms, 0.0)]
            );
            assert_eq!(counters(&st, "battery_stats.data_conn"), [(t0, 13.0)]);
            assert_eq!(counters(&st, "batt.capacity_pct"), [(t0, 90.0)]);
            assert_eq!(counters(&st, "batt.voltage_uv"), [(t0, 4_000_000.0)]);
            assert_eq!(counters(&st, "BatteryStatus"), [(t0, 3.0)]);
            let slices: Vec<(i64, i64, &str, &str)> = st
                .slices
                .iter()
                .map(|s| {
                    let track = st.tracks[s.track_id as usize].name;
                    (
                        s.ts,
                        s.dur,
                        st.strings.get(s.name).unwrap_or(""),
                        st.strings.get(track).unwrap_or(""),
                    )
                })
                .collect();
            assert_eq!(
                slices,
                [
                    (t0, 0, "top=10216:\"com.example.app\"", "battery_stats.top"),
                    (t0 + 10 * ms, 10 * ms, "*radio, lock*", "WakeLocks"),
                    (t0 + 15 * ms, 25 * ms, "com.example.app", "WakeLocks"),
                ]
            );
            assert_ne!(st.slices[1].track_id, st.slices[2].track_id);
        }
    }

    /// Dumpstate text: its lines are rows of `android_dumpstate` with the
    /// section and dumpsys service they are in (section markers and
    /// dumpsys separators are not), and its checkin section is read.
    #[test]
    fn dumpstate_lines_are_kept_with_their_section_and_service() {
        let text = "========================================================\n\
== dumpstate: 2021-08-24 23:35:40\n\
------ DUMPSYS (/system/bin/dumpsys) ------\n\
DUMP OF SERVICE CRITICAL alarm:\n\x20 nowRTC=1\n\
--------- 0.1s was the duration of dumpsys alarm, ending at: x\n\
------ 0.3s was the duration of 'DUMPSYS' ------\n\
------ CHECKIN BATTERYSTATS (dumpsys batterystats -c) ------\n\
9,h,0:RESET:TIME:1000\n\
9,h,0,+S\n";
        let mut l = Loader::new();
        l.push(text.as_bytes()).unwrap();
        let st = l.finish().unwrap();
        let rows: Vec<(Option<&str>, Option<&str>, &str)> = st
            .android
            .dumpstate
            .iter()
            .map(|r| {
                (
                    st.strings.get(r.section),
                    st.strings.get(r.service),
                    st.strings.get(r.line).unwrap_or(""),
                )
            })
            .collect();
        let checkin = Some("CHECKIN BATTERYSTATS (dumpsys batterystats -c)");
        assert_eq!(
            rows,
            [
                (
                    None,
                    None,
                    "========================================================"
                ),
                (None, None, "== dumpstate: 2021-08-24 23:35:40"),
                (
                    Some("DUMPSYS (/system/bin/dumpsys)"),
                    Some("alarm"),
                    "DUMP OF SERVICE CRITICAL alarm:"
                ),
                (
                    Some("DUMPSYS (/system/bin/dumpsys)"),
                    Some("alarm"),
                    "  nowRTC=1"
                ),
                (checkin, None, "9,h,0:RESET:TIME:1000"),
                (checkin, None, "9,h,0,+S"),
            ]
        );
        assert_eq!(counters(&st, "ScreenState"), [(1_000_000_000, 2.0)]);
        // The public view shows them (it was once an empty placeholder).
        let tp = crate::TraceProcessor::from_storage(st).expect("engine");
        let r = tp
            .query("SELECT section, service, line FROM android_dumpstate WHERE id = 3")
            .expect("query");
        assert_eq!(
            r.rows,
            vec![vec![
                crate::Value::Text("DUMPSYS (/system/bin/dumpsys)".to_owned()),
                crate::Value::Text("alarm".to_owned()),
                crate::Value::Text("  nowRTC=1".to_owned()),
            ]]
        );
    }

    /// A checkin line that does not start with `9` is an error, as
    /// upstream's reader makes it.
    #[test]
    fn a_foreign_line_in_a_checkin_file_is_an_error() {
        let mut l = Loader::new();
        l.push(b"9,0,i,vers,36,214\nhello\n").unwrap();
        let e = l.finish().unwrap_err();
        assert!(
            matches!(e, crate::TraceError::Malformed { offset: 18, .. }),
            "{e}"
        );
    }
}
