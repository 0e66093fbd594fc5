//! `SystemInfo` (TracePacket field 45): the machine's uname, Android build,
//! CPUs and RAM into its `machine` row, and into `metadata` under
//! upstream's names (`system_name`, `system_release`, ...), kept per
//! machine as upstream keeps them; a known architecture also names the
//! system calls.

use zerotrace_protos::protos::{SystemInfoDecoder, TracePacket};

use super::Parser;
use super::importer::{Importer, Input};

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(TracePacket::FIELD_SYSTEM_INFO, import)];

fn import(p: &mut Parser, input: &Input<'_>) {
    let si = SystemInfoDecoder::new(input.bytes);
    let machine = p.machine as usize;
    let host = machine == 0;
    if let (true, Some(u)) = (host, si.utsname()) {
        let (sysname, release) = (u.sysname().unwrap_or(""), u.release().unwrap_or(""));
        super::sched::note_kernel(p, sysname, release);
    }
    // The architecture names the system calls (`syscalls.rs`).
    if let Some(arch) = si
        .utsname()
        .and_then(|u| u.machine())
        .and_then(super::syscalls::Arch::from_machine)
    {
        p.syscalls.arch = Some(arch);
    }
    let s = &mut p.storage;
    let mut row = s.machines.get(machine).cloned().unwrap_or_default();
    if let Some(name) = si.machine_name() {
        row.name = s.strings.intern(name);
    }
    if let Some(u) = si.utsname() {
        let [sysname, version, release, arch] =
            [u.sysname(), u.version(), u.release(), u.machine()].map(|v| v.unwrap_or(""));
        row.sysname = s.strings.intern(sysname);
        row.version = s.strings.intern(version);
        row.release = s.strings.intern(release);
        row.arch = s.strings.intern(arch);
        s.set_metadata_str("system_name", sysname);
        s.set_metadata_str("system_version", version);
        s.set_metadata_str("system_release", release);
        s.set_metadata_str("system_machine", arch);
    }
    if let Some(tz) = si.timezone_off_mins() {
        s.set_metadata_int("timezone_off_mins", i64::from(tz));
    }
    let fingerprint = si
        .android_build_fingerprint()
        .map(|fp| (fp, Fingerprint::parse(fp)));
    if let Some((fp, parts)) = &fingerprint {
        row.android_build_fingerprint = s.strings.intern(fp);
        s.set_metadata_str("android_build_fingerprint", fp);
        if let Some(parts) = parts {
            s.set_metadata_str("android_incremental_build", parts.incremental);
        }
    }
    if let Some(m) = si.android_device_manufacturer() {
        row.android_device_manufacturer = s.strings.intern(m);
        s.set_metadata_str("android_device_manufacturer", m);
    }
    // The SDK the trace names, else the one its build's release implies.
    let sdk = si.android_sdk_version().map(|v| v as i64).or_else(|| {
        fingerprint
            .as_ref()
            .and_then(|(_, parts)| parts.as_ref())
            .and_then(|parts| parts.sdk)
    });
    if let Some(v) = sdk {
        row.android_sdk_version = Some(v);
        s.set_metadata_int("android_sdk_version", v);
    }
    for (key, value) in [
        ("tracing_service_version", si.tracing_service_version()),
        ("android_soc_model", si.android_soc_model()),
        ("android_guest_soc_model", si.android_guest_soc_model()),
        ("android_hardware_revision", si.android_hardware_revision()),
        ("android_storage_model", si.android_storage_model()),
        ("android_ram_model", si.android_ram_model()),
        ("android_serial_console", si.android_serial_console()),
    ] {
        if let Some(v) = value {
            s.set_metadata_str(key, v);
        }
    }
    if let Some(n) = si.num_cpus() {
        row.num_cpus = Some(i64::from(n));
    }
    if let Some(b) = si.system_ram_bytes() {
        let b = i64::try_from(b).unwrap_or(i64::MAX);
        row.system_ram_bytes = Some(b);
        s.set_metadata_int("system_ram_bytes", b);
        s.set_metadata_int("system_ram_gb", (b as f64 / 1e9).round() as i64);
    }
    if let Some(slot) = s.machines.get_mut(machine) {
        *slot = row;
    }
}

/// What an Android build fingerprint
/// (`brand/product/device:release/id/incremental:type/tags`) says.
struct Fingerprint<'a> {
    /// The SDK level its release number stands for, when known.
    sdk: Option<i64>,
    /// The build's incremental version.
    incremental: &'a str,
}

impl<'a> Fingerprint<'a> {
    /// The parts of a fingerprint, or None when it lacks the separators.
    fn parse(fp: &'a str) -> Option<Self> {
        let colon = fp.find(':')?;
        let release_end = colon + fp[colon..].find('/')?;
        let release = &fp[colon + 1..release_end];
        let id_end = release_end + 1 + fp[release_end + 1..].find('/')?;
        let incremental_end = id_end + fp[id_end..].find(':')?;
        Some(Fingerprint {
            sdk: sdk_of_release(release),
            incremental: &fp[id_end + 1..incremental_end],
        })
    }
}

/// The SDK level of an Android release number (as the compatibility
/// definition lists them; S and T previews count as 31).
fn sdk_of_release(release: &str) -> Option<i64> {
    if release.starts_with('S') || release.starts_with('T') {
        return Some(31);
    }
    let sdk = match release {
        "12" => 31,
        "11" => 30,
        "10" => 29,
        "9" => 28,
        "8.1" => 27,
        "8.0" => 26,
        "7.1" => 25,
        "7.0" => 24,
        "6.0" => 23,
        "5.1" | "5.1.1" => 22,
        "5.0" | "5.0.1" | "5.0.2" => 21,
        _ => return None,
    };
    Some(sdk)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_parts() {
        let f =
            Fingerprint::parse("google/coral/coral:12/SP1A.210812.015/7679548:userdebug/dev-keys");
        let f = f.unwrap();
        assert_eq!((f.sdk, f.incremental), (Some(31), "7679548"));
        let f = Fingerprint::parse("google/shamu/shamu:7.0/NBD92F/3753956:userdebug/dev-keys");
        assert_eq!(
            f.map(|f| (f.sdk, f.incremental)),
            Some((Some(24), "3753956"))
        );
        assert!(Fingerprint::parse("no-colon/at/all").is_none());
        assert!(Fingerprint::parse("a:b/c").is_none());
        let f = Fingerprint::parse("x:15/ID/42:user/keys").unwrap();
        assert_eq!((f.sdk, f.incremental), (None, "42"));
    }
}
