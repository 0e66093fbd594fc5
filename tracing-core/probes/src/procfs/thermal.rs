//! Thermal zones, `/sys/class/thermal/thermal_zoneN/{temp,type}`: the
//! temperature in millidegrees Celsius and the zone's type name.

use super::{ProcError, ProcRoot};

const DIR: &str = "sys/class/thermal";
const CAP: usize = 4096;

/// One zone as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThermalZone {
    /// The directory name (`thermal_zone0`).
    pub name: String,
    /// `temp`, millidegrees Celsius, if readable.
    pub temp_millicelsius: Option<i64>,
    /// `type`, if readable.
    pub zone_type: Option<String>,
}

/// Parses a `temp` file (a signed number of millidegrees).
pub fn parse_temp(bytes: &[u8]) -> Result<i64, ProcError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| ProcError::malformed("thermal_zone*/temp", "not a number"))
}

/// Every `thermal_zone*` under the root, sorted by name; a zone whose
/// files cannot be read keeps `None` there. No thermal class: no zones.
pub fn read_zones(root: &ProcRoot) -> Vec<ThermalZone> {
    let Ok(names) = root.list(DIR) else {
        return Vec::new();
    };
    names
        .into_iter()
        .filter(|n| n.starts_with("thermal_zone"))
        .map(|name| {
            let temp_millicelsius = root
                .read(format!("{DIR}/{name}/temp"), CAP)
                .ok()
                .and_then(|b| parse_temp(&b).ok());
            let zone_type = root
                .read(format!("{DIR}/{name}/type"), CAP)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).trim_end().to_owned());
            ThermalZone {
                name,
                temp_millicelsius,
                zone_type,
            }
        })
        .collect()
}
