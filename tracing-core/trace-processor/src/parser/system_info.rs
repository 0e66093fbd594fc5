//! `SystemInfo` (TracePacket field 45): the machine's uname, Android build,
//! CPUs and RAM into its `machine` row, and for the host into `metadata`
//! under upstream's names (`system_name`, `system_release`, ...); a known
//! architecture also names the system calls.

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
        if host {
            s.set_metadata_str("system_name", sysname);
            s.set_metadata_str("system_version", version);
            s.set_metadata_str("system_release", release);
            s.set_metadata_str("system_machine", arch);
        }
    }
    if let Some(tz) = si.timezone_off_mins() {
        if host {
            s.set_metadata_int("timezone_off_mins", i64::from(tz));
        }
    }
    if let Some(fp) = si.android_build_fingerprint() {
        row.android_build_fingerprint = s.strings.intern(fp);
        if host {
            s.set_metadata_str("android_build_fingerprint", fp);
        }
    }
    if let Some(m) = si.android_device_manufacturer() {
        row.android_device_manufacturer = s.strings.intern(m);
        if host {
            s.set_metadata_str("android_device_manufacturer", m);
        }
    }
    if let Some(v) = si.android_sdk_version() {
        let v = v as i64;
        row.android_sdk_version = Some(v);
        if host {
            s.set_metadata_int("android_sdk_version", v);
        }
    }
    if host {
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
    }
    if let Some(n) = si.num_cpus() {
        row.num_cpus = Some(i64::from(n));
    }
    if let Some(b) = si.system_ram_bytes() {
        let b = i64::try_from(b).unwrap_or(i64::MAX);
        row.system_ram_bytes = Some(b);
        if host {
            s.set_metadata_int("system_ram_bytes", b);
            s.set_metadata_int("system_ram_gb", (b as f64 / 1e9).round() as i64);
        }
    }
    if let Some(slot) = s.machines.get_mut(machine) {
        *slot = row;
    }
}
