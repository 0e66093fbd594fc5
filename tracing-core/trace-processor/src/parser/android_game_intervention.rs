//! `android_game_intervention_list` (TracePacket field 83): the games the
//! game manager knows, each with the modes it supports (standard,
//! performance, battery) and what each mode changes (resolution downscale,
//! ANGLE, frame rate), into `android_game_intervention_list`; the list's
//! read and parse errors as upstream's stats.

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::tables::android::AndroidGameInterventionRow;

/// TracePacket.android_game_intervention_list.
const GAME_INTERVENTION_LIST: u32 = 83;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(GAME_INTERVENTION_LIST, import)];

fn fields(bytes: &[u8]) -> impl Iterator<Item = protozero::Field<'_>> {
    Decoder::new(bytes).map_while(Result::ok)
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let (mut read_error, mut parse_error) = (false, false);
    for f in fields(input.bytes) {
        match f.id {
            1 => {
                if let Ok(game) = f.as_bytes() {
                    package(p, game);
                }
            }
            2 => parse_error = f.as_bool().unwrap_or(false),
            3 => read_error = f.as_bool().unwrap_or(false),
            _ => {}
        }
    }
    p.storage
        .stats
        .set("game_intervention_has_read_errors", i64::from(read_error));
    p.storage
        .stats
        .set("game_intervention_has_parse_errors", i64::from(parse_error));
}

/// A mode's interventions: downscale, ANGLE, frame rate.
type Mode = (Option<f64>, Option<i64>, Option<f64>);

fn mode(bytes: &[u8]) -> (u32, Mode) {
    let (mut num, mut angle, mut downscale, mut fps) = (0u32, false, 0f32, 0f32);
    for f in fields(bytes) {
        match f.id {
            1 => num = f.as_u32().unwrap_or(0),
            2 => angle = f.as_bool().unwrap_or(false),
            3 => downscale = f.as_f32().unwrap_or(0.0),
            4 => fps = f.as_f32().unwrap_or(0.0),
            _ => {}
        }
    }
    (
        num,
        (
            Some(f64::from(downscale)),
            Some(i64::from(angle)),
            Some(f64::from(fps)),
        ),
    )
}

fn package(p: &mut Parser, bytes: &[u8]) {
    let mut name = "";
    let mut row = AndroidGameInterventionRow::default();
    for f in fields(bytes) {
        match f.id {
            1 => name = f.as_str().unwrap_or(""),
            2 => row.uid = f.as_u64().map(|v| v as i64).unwrap_or(0),
            3 => row.current_mode = i64::from(f.as_u32().unwrap_or(0) as i32),
            4 => {
                let Ok(info) = f.as_bytes() else { continue };
                let (num, (downscale, angle, fps)) = mode(info);
                match num {
                    1 => {
                        row.standard_mode_supported = 1;
                        row.standard_mode_downscale = downscale;
                        row.standard_mode_use_angle = angle;
                        row.standard_mode_fps = fps;
                    }
                    2 => {
                        row.perf_mode_supported = 1;
                        row.perf_mode_downscale = downscale;
                        row.perf_mode_use_angle = angle;
                        row.perf_mode_fps = fps;
                    }
                    3 => {
                        row.battery_mode_supported = 1;
                        row.battery_mode_downscale = downscale;
                        row.battery_mode_use_angle = angle;
                        row.battery_mode_fps = fps;
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    row.package_name = p.storage.strings.intern(name);
    p.storage.android.game_interventions.push(row);
}
