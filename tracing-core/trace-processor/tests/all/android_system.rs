//! Android's system packets (CPU time per uid, ...) into the tracks and
//! tables upstream makes of them, checked against what the test wrote.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.cpu_per_uid_data`.
const CPU_PER_UID_DATA: u32 = 119;

fn r(v: f64) -> Value {
    Value::Real(v)
}

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

/// A `cpu_per_uid_data` packet at `ts` on sequence 1 (`clear`: its
/// incremental state cleared first).
fn cpu_per_uid(ts: u64, clear: bool, clusters: Option<u32>, data: &[(u32, &[u64])]) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        p.set_trusted_packet_sequence_id(1);
        if clear {
            p.set_incremental_state_cleared(true);
        }
        let mut m = p.message().begin_nested(CPU_PER_UID_DATA);
        if let Some(c) = clusters {
            m.append_uint32(1, c);
        }
        for (uid, _) in data {
            m.append_uint32(2, *uid);
        }
        for (_, times) in data {
            for t in *times {
                m.append_uint64(3, *t);
            }
        }
    })
}

#[test]
fn cpu_per_uid_values_are_since_boot_then_increments_and_isolated_uids_are_grouped() {
    // 90002 is first seen in the second packet: its since-boot time adds
    // nothing to its group's time over the trace.
    let tp = load(&[
        cpu_per_uid(
            100,
            true,
            Some(2),
            &[(1000, &[10, 20]), (10_050, &[5, 0]), (90_001, &[7, 0])],
        ),
        cpu_per_uid(
            200,
            false,
            None,
            &[(1000, &[3, 0]), (10_050, &[0, 0]), (90_002, &[4, 0])],
        ),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value FROM counter c JOIN counter_track t ON t.id = c.track_id
             WHERE t.name GLOB 'CPU for UID 1000 *' OR t.name GLOB 'CPU for UID 90000 *'
                OR t.name GLOB 'CPU for System*'
             ORDER BY t.name, c.ts"
        ),
        vec![
            vec![s("CPU for System CL0"), i(100), r(0.0)],
            vec![s("CPU for System CL0"), i(200), r(3.0)],
            vec![s("CPU for System CL1"), i(100), r(0.0)],
            vec![s("CPU for UID 1000 CL0"), i(100), r(10.0)],
            vec![s("CPU for UID 1000 CL0"), i(200), r(13.0)],
            vec![s("CPU for UID 1000 CL1"), i(100), r(20.0)],
            vec![s("CPU for UID 90000 CL0"), i(100), r(0.0)],
            vec![s("CPU for UID 90000 CL1"), i(100), r(0.0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT uid, cluster, total_cpu_millis FROM __intrinsic_android_cpu_per_uid_track
             ORDER BY uid, cluster"
        ),
        vec![
            vec![i(1000), i(0), i(3)],
            vec![i(1000), i(1), i(0)],
            vec![i(10_050), i(0), i(0)],
            vec![i(10_050), i(1), i(0)],
            vec![i(90_000), i(0), i(0)],
            vec![i(90_000), i(1), i(0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT unit, extract_arg(dimension_arg_set_id, 'uid') FROM counter_track
             WHERE name = 'CPU for UID 1000 CL0'"
        ),
        vec![vec![s("ms"), i(1000)]]
    );
}

/// `TracePacket.android_system_property`.
const ANDROID_SYSTEM_PROPERTY: u32 = 86;

#[test]
fn system_properties_land_on_the_tracks_atrace_fills() {
    let props = packet(|p| {
        p.set_timestamp(1000);
        let mut m = p.message().begin_nested(ANDROID_SYSTEM_PROPERTY);
        for (name, value) in [
            ("debug.tracing.screen_state", "2"),
            ("debug.tracing.device_state", "folded"),
            ("debug.tracing.battery_stats.audio", "1"),
            ("debug.tracing.plug_type", "3"),
            ("debug.tracing.mcc", "not a number"),
            ("unrelated.property", "5"),
        ] {
            let mut kv = m.begin_nested(1);
            kv.append_string(1, name);
            kv.append_string(2, value);
        }
    });
    let tp = load(&[props]);
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.type, c.ts, c.value FROM counter c
             JOIN counter_track t ON t.id = c.track_id ORDER BY t.name"
        ),
        vec![
            vec![s("PlugType"), s("sysprop_counter"), i(1000), r(3.0)],
            vec![s("ScreenState"), s("screen_state"), i(1000), r(2.0)],
            vec![
                s("battery_stats.audio"),
                s("battery_stats"),
                i(1000),
                r(1.0)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.type, s.ts, s.dur, s.name FROM slice s JOIN track t ON t.id = s.track_id"
        ),
        vec![vec![
            s("DeviceStateChanged"),
            s("android_device_state"),
            i(1000),
            i(0),
            s("folded")
        ]]
    );
}

/// `TracePacket.packages_list`.
const PACKAGES_LIST: u32 = 47;
/// `TracePacket.user_list`.
const USER_LIST: u32 = 123;

#[test]
fn packages_and_users_are_listed_once_and_uids_are_named() {
    let packages = packet(|p| {
        p.set_timestamp(1);
        let mut m = p.message().begin_nested(PACKAGES_LIST);
        for (name, uid) in [
            ("com.android.providers.media", 10_010u64),
            ("com.google.android.gms", 10_010),
            ("com.example.app", 10_020),
            ("com.example.app", 10_021),
        ] {
            let mut info = m.begin_nested(1);
            info.append_string(1, name);
            info.append_uint64(2, uid);
            info.append_bool(3, true);
            info.append_int64(5, 7);
        }
        m.append_bool(3, true);
    });
    let users = packet(|p| {
        p.set_timestamp(2);
        let mut m = p.message().begin_nested(USER_LIST);
        for (kind, uid) in [
            ("full.SYSTEM", 0),
            ("profile.MANAGED", 10),
            ("full.SECONDARY", 0),
        ] {
            let mut u = m.begin_nested(1);
            u.append_string(1, kind);
            u.append_int32(2, uid);
        }
        m.append_int32(2, -1);
    });
    let tp = load(&[packages, users]);
    assert_eq!(
        rows(
            &tp,
            "SELECT package_name, uid, debuggable, version_code FROM package_list ORDER BY id"
        ),
        vec![
            vec![s("com.android.providers.media"), i(10_010), i(1), i(7)],
            vec![s("com.google.android.gms"), i(10_010), i(1), i(7)],
            vec![s("com.example.app"), i(10_020), i(1), i(7)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.package_lookup;
             SELECT android_package_lookup(1010010), android_package_lookup(10020),
                    android_package_lookup(1000), android_package_lookup(99001),
                    android_package_lookup(12345), android_package_lookup(NULL)"
        ),
        vec![vec![
            s("com.google.android.gms"),
            s("com.example.app"),
            s("AID_SYSTEM_USER"),
            s("ISOLATED_UID"),
            s("uid=12345"),
            Value::Null
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.user_list;
             SELECT android_user_id, type FROM android_user_list ORDER BY android_user_id"
        ),
        vec![
            vec![i(0), s("full.SECONDARY")],
            vec![i(10), s("profile.MANAGED")]
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, value FROM stats WHERE name IN
               ('packages_list_has_read_errors', 'packages_list_has_parse_errors', 'user_list_errors')
             ORDER BY name"
        ),
        vec![
            vec![s("packages_list_has_parse_errors"), i(0)],
            vec![s("packages_list_has_read_errors"), i(1)],
            vec![s("user_list_errors"), i(1)],
        ]
    );
    // Every module of this importer's tables includes and reads.
    rows(
        &tp,
        "INCLUDE PERFETTO MODULE android.process_metadata;
         SELECT * FROM android_process_metadata",
    );
}

/// `TracePacket.android_game_intervention_list`.
const GAME_INTERVENTION_LIST: u32 = 83;

#[test]
fn game_interventions_are_one_row_per_game_with_each_supported_mode() {
    let list = packet(|p| {
        p.set_timestamp(1);
        let mut m = p.message().begin_nested(GAME_INTERVENTION_LIST);
        let mut game = m.begin_nested(1);
        game.append_string(1, "com.test.game");
        game.append_uint64(2, 10_042);
        game.append_uint32(3, 2);
        let mut perf = game.begin_nested(4);
        perf.append_uint32(1, 2);
        perf.append_bool(2, true);
        perf.append_float(3, 0.5);
        perf.append_float(4, 120.0);
    });
    let tp = load(&[list]);
    assert_eq!(
        rows(
            &tp,
            "SELECT package_name, uid, current_mode, standard_mode_supported,
                    standard_mode_fps, perf_mode_supported, perf_mode_downscale,
                    perf_mode_use_angle, perf_mode_fps, battery_mode_supported
             FROM android_game_intervention_list"
        ),
        vec![vec![
            s("com.test.game"),
            i(10_042),
            i(2),
            i(0),
            Value::Null,
            i(1),
            r(0.5),
            i(1),
            r(120.0),
            i(0)
        ]]
    );
}

/// `TracePacket.kernel_wakelock_data`.
const KERNEL_WAKELOCK_DATA: u32 = 115;

fn wakelocks(ts: u64, clear: bool, described: &[(u32, &str, i32)], held: &[(u32, u64)]) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        p.set_trusted_packet_sequence_id(3);
        if clear {
            p.set_incremental_state_cleared(true);
        }
        let mut m = p.message().begin_nested(KERNEL_WAKELOCK_DATA);
        for (id, name, kind) in described {
            let mut w = m.begin_nested(1);
            w.append_uint32(1, *id);
            w.append_string(2, name);
            w.append_int32(3, *kind);
        }
        for (id, _) in held {
            m.append_uint32(2, *id);
        }
        for (_, ms) in held {
            m.append_uint64(3, *ms);
        }
    })
}

#[test]
fn kernel_wakelocks_report_the_time_held_since_the_trace_began() {
    let tp = load(&[
        wakelocks(
            100,
            true,
            &[(1, "wl_a", 1), (2, "wl_b", 2)],
            &[(1, 5), (2, 0)],
        ),
        wakelocks(200, false, &[(1, "again", 1)], &[(1, 3), (9, 1)]),
        wakelocks(300, false, &[], &[(1, 0)]),
        wakelocks(400, false, &[], &[(2, 2)]),
    ]);
    // wl_a: 5, 8, 8, 8 ms; wl_b: 0, 0, 0, 2 ms (repeated before it changes).
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, extract_arg(t.dimension_arg_set_id, 'wakelock_type'), c.ts, c.value
             FROM counter c JOIN counter_track t ON t.id = c.track_id
             WHERE t.type = 'android_kernel_wakelock' ORDER BY t.name, c.ts"
        ),
        vec![
            vec![s("wl_a"), s("kernel"), i(100), r(5e6)],
            vec![s("wl_a"), s("kernel"), i(200), r(8e6)],
            vec![s("wl_b"), s("native"), i(100), r(0.0)],
            vec![s("wl_b"), s("native"), i(300), r(0.0)],
            vec![s("wl_b"), s("native"), i(400), r(2e6)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, value FROM stats WHERE name GLOB 'kernel_wakelock_*' AND value > 0
             ORDER BY name"
        ),
        vec![
            vec![s("kernel_wakelock_reused_id"), i(1)],
            vec![s("kernel_wakelock_unknown_id"), i(1)],
        ]
    );
    rows(
        &tp,
        "INCLUDE PERFETTO MODULE android.kernel_wakelocks;
         SELECT * FROM android_kernel_wakelocks",
    );
}

/// atrace's `ScreenState`, `battery_stats.*` counters and
/// `DeviceStateChanged` instants land on the same global tracks as the
/// system properties of the same meaning.
#[test]
fn atrace_screen_state_battery_stats_and_device_state_are_global_tracks() {
    use zerotrace_protos::protos::FtraceEventBundle;
    let bundle = packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        let mut b = FtraceEventBundle::from_message(p.message().begin_nested(1));
        b.set_cpu(0);
        for (ts, line) in [
            (100u64, "C|10|ScreenState|2\n"),
            (200, "C|10|battery_stats.audio|1\n"),
            (300, "N|10|DeviceStateChanged|open\n"),
            (400, "C|10|other|5\n"),
        ] {
            let mut e = b.add_event();
            e.set_timestamp(ts);
            e.set_pid(10);
            e.begin_print().set_buf(line);
        }
    });
    let tp = load(&[bundle]);
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.type, c.ts, c.value FROM counter c
             JOIN counter_track t ON t.id = c.track_id ORDER BY c.ts"
        ),
        vec![
            vec![s("ScreenState"), s("screen_state"), i(100), r(2.0)],
            vec![s("battery_stats.audio"), s("battery_stats"), i(200), r(1.0)],
            vec![s("other"), s("atrace_counter"), i(400), r(5.0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.type, s.ts, s.name FROM slice s JOIN track t ON t.id = s.track_id"
        ),
        vec![vec![
            s("DeviceStateChanged"),
            s("android_device_state"),
            i(300),
            s("open")
        ]]
    );
}
