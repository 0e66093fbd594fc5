//! Traces that Perfetto's own code writes, loaded by our trace processor
//! (issue 64, "traces from outside"): the genuine C SDK's producer recorded
//! by the genuine service and read by the genuine consumer, and an
//! Android-like system trace written as protobuf text and encoded by
//! protoc over Perfetto's upstream schema. Each loads with no error or
//! data-loss stat the test does not name with its reason, and its slices,
//! threads, counters and Android rows are the ones the trace holds.
//! (The genuine service with our probes, and with our TrackEvent backend,
//! are checked the same way in `tests/probes_genuine_service.rs` and
//! `tests/track_event_genuine_service.rs`.)

use std::path::Path;

use zerotrace_interop::oracle::{check_genuine_workload, oracle_config, record_genuine};
use zerotrace_interop::sdk_workload as workload;
use zerotrace_interop::services::{Service, Which};

use crate::tp_check::{self, int, rows};

/// The genuine SDK's workload (`genuine-sdk/src/workload.rs`) through the
/// genuine service, read by the genuine consumer, as our tables show it.
#[test]
fn the_genuine_sdks_trace_loads_with_every_event() {
    let svc = Service::start(Which::Genuine, "tp-sdk");
    let (trace, pid) = record_genuine(&svc, &svc.producer, &oracle_config(), true);
    check_genuine_workload(&trace, pid, "genuine SDK, service and consumer");
    let tp = tp_check::load(&trace);
    tp_check::assert_no_unexplained_stats(&tp, &[]);

    // The slices on the producer's threads, by name, with their depth.
    let thread_slices = rows(
        &tp,
        &format!(
            "SELECT s.name, s.depth, s.dur > 0 FROM slice s \
             JOIN thread_track tt ON s.track_id = tt.id JOIN thread USING (utid) \
             JOIN process USING (upid) WHERE process.pid = {pid} ORDER BY s.ts, s.depth"
        ),
    );
    let mut want: Vec<String> = (0..workload::SLICES)
        .map(|i| format!("slice_{i:02}|0|1"))
        .collect();
    want.extend(["outer|0|1", "inner|1|1", "flow_src|0|1", "flow_dst|0|0"].map(String::from));
    want.extend((0..workload::INSTANTS).map(|_| "instant_marker|0|0".to_owned()));
    want.extend(["big_event|0|0", "done_marker|0|0"].map(String::from));
    assert_eq!(thread_slices, want);

    // Every debug annotation kind, as args.
    assert_eq!(
        rows(
            &tp,
            "SELECT extract_arg(arg_set_id, 'debug.idx'), extract_arg(arg_set_id, 'debug.uidx'), \
             extract_arg(arg_set_id, 'debug.even'), extract_arg(arg_set_id, 'debug.ratio'), \
             length(extract_arg(arg_set_id, 'debug.label')) FROM slice \
             WHERE name = 'slice_03'"
        ),
        [format!("3|3|0|0.75|{}", workload::label(3).len())]
    );
    assert_eq!(
        int(
            &tp,
            "SELECT length(extract_arg(arg_set_id, 'debug.blob')) FROM slice \
             WHERE name = 'big_event'"
        ),
        workload::BIG_ANNOTATION_LEN as i64,
        "the annotation the SDK split across chunks, whole"
    );
    // The named track, the counter track and the flow.
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, s.dur > 0 FROM slice s JOIN track t ON s.track_id = t.id \
             WHERE s.name = 'on_named_track'"
        ),
        [format!("{}|1", workload::NAMED_TRACK)]
    );
    let mut counter: Vec<String> = workload::COUNTER_VALUES
        .iter()
        .map(|v| v.to_string())
        .collect();
    counter.push(workload::COUNTER_DOUBLE.to_string());
    assert_eq!(
        rows(
            &tp,
            &format!(
                "SELECT c.value FROM counter c JOIN counter_track t ON c.track_id = t.id \
                 WHERE t.name = '{}' ORDER BY c.ts",
                workload::COUNTER_TRACK
            )
        ),
        counter
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT o.name, i.name FROM flow f JOIN slice o ON f.slice_out = o.id \
             JOIN slice i ON f.slice_in = i.id"
        ),
        ["flow_src|flow_dst"]
    );
}

/// protoc's encoding of `tests/data/android_like.textproto`.
fn android_like_trace() -> Vec<u8> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/android_like.textproto"),
    )
    .expect("the textproto");
    let root = zerotrace_interop::upstream_proto_root().expect("the upstream schema");
    let mut child = std::process::Command::new(zerotrace_interop::protoc().expect("protoc"))
        .arg(format!("-I{}", root.display()))
        .arg("--encode=perfetto.protos.Trace")
        .arg("protos/perfetto/trace/trace.proto")
        .current_dir(&root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run protoc");
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(text.as_bytes())
    });
    let out = child.wait_with_output().expect("protoc's output");
    feeder.join().expect("the feeder").expect("write to protoc");
    assert!(
        out.status.success(),
        "protoc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The Android-like trace: the service's packets, ftrace (plain events and
/// compact sched, atrace markers), process tree and memory, packages,
/// system property and display state, battery and power rails, logcat and
/// meminfo, each in the table upstream's importers fill.
#[test]
fn an_android_like_trace_loads_into_androids_tables() {
    let tp = tp_check::load(&android_like_trace());
    tp_check::assert_no_unexplained_stats(&tp, &[]);
    // Nothing dropped or mended, and nothing in the config to warn about.
    assert_eq!(
        rows(&tp, "SELECT name FROM _trace_import_logs"),
        Vec::<String>::new()
    );
    assert_eq!(
        rows(&tp, "SELECT key FROM __intrinsic_trace_diagnostics"),
        Vec::<String>::new()
    );

    // Scheduling: CPU 0's plain sched_switch events, CPU 1's compact ones
    // (whose first switch only says who runs, as upstream reads it).
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.cpu, t.tid, t.name FROM sched s JOIN thread t USING (utid) \
             WHERE t.tid != 0 ORDER BY s.ts"
        ),
        [
            "100010000000|4000000|0|4321|com.example.app",
            "100012200000|3000000|1|4340|RenderThread",
            "100029000000|2000000|0|612|system_server",
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts.state FROM thread_state ts JOIN thread t USING (utid) \
             WHERE t.tid = 4340 AND ts.ts = 100012100000"
        ),
        ["R"],
        "RenderThread runnable from its wakeup"
    );
    // Atrace markers: nested thread slices, an async slice, a counter.
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, s.depth, t.tid FROM slice s \
             JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid) ORDER BY s.ts"
        ),
        [
            "100010100000|2900000|Choreographer#doFrame 1|0|4321",
            "100010200000|1800000|traversal|1|4321",
            "100012500000|2500000|DrawFrame 1|0|4340",
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name FROM slice s JOIN process_track pt ON s.track_id = pt.id \
             JOIN process p USING (upid) WHERE p.pid = 612"
        ),
        ["100029500000|1000000|launching: com.example.app"]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, c.value FROM counter c JOIN process_counter_track t \
             ON c.track_id = t.id JOIN process p USING (upid) \
             WHERE t.name = 'aq:pending' AND p.pid = 4321 ORDER BY c.ts"
        ),
        ["100011000000|3", "100012800000|0"]
    );
    // Processes and threads: the tree, a thread made during the trace.
    assert_eq!(
        rows(
            &tp,
            "SELECT p.pid, p.name, p.uid, p.android_appid FROM process p WHERE p.pid IN (612, 4321) \
             ORDER BY p.pid"
        ),
        [
            "612|system_server|1000|1000",
            "4321|com.example.app|10123|10123"
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.tid, t.name FROM thread t JOIN process p USING (upid) \
             WHERE p.pid = 4321 ORDER BY t.tid"
        ),
        [
            "4321|com.example.app",
            "4340|RenderThread",
            "4341|HeapTaskDaemon",
            "4350|binder:4321_2"
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT package_name, uid, debuggable, profileable_from_shell, version_code \
             FROM package_list ORDER BY uid"
        ),
        [
            "com.android.systemui|10080|0|0|340000000",
            "com.example.app|10123|1|1|42"
        ]
    );
    // Logcat, its realtime clock turned into boot time.
    assert_eq!(
        rows(
            &tp,
            "SELECT l.ts, l.prio, l.tag, l.msg, t.tid FROM android_logs l \
             JOIN thread t USING (utid) ORDER BY l.ts"
        ),
        [
            "100010050000|4|Choreographer|Skipped 1 frames!|4321",
            "100012600000|5|OpenGLRenderer|Davey! duration=2ms|4340",
            "100029400000|4|ActivityTaskManager|START u0 {cmp=com.example.app/.MainActivity} from uid 10080|640"
        ]
    );
    // Counters: CPU frequency and idle, battery, power rails, memory, screen.
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.cpu, c.ts, c.value FROM counter c JOIN cpu_counter_track t \
             ON c.track_id = t.id ORDER BY t.name, c.ts"
        ),
        [
            "cpufreq|0|100020000100|1800000",
            "cpuidle|0|100014100000|1",
            "cpuidle|0|100020000000|4294967295"
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value FROM counter c JOIN counter_track t ON c.track_id = t.id \
             WHERE t.name GLOB 'batt.*' ORDER BY t.name, c.ts"
        ),
        [
            "batt.capacity_pct|100005000000|87",
            "batt.capacity_pct|100055000000|87",
            "batt.charge_uah|100005000000|3500000",
            "batt.charge_uah|100055000000|3499800",
            "batt.current_ua|100005000000|-250000",
            "batt.current_ua|100055000000|-300000",
            // |current x voltage|, truncated to whole mW as upstream does.
            "batt.power_mw|100005000000|1025",
            "batt.power_mw|100055000000|1229",
            "batt.voltage_uv|100005000000|4100000",
            "batt.voltage_uv|100055000000|4098000",
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value FROM counter c JOIN counter_track t ON c.track_id = t.id \
             WHERE t.name GLOB 'power.*' ORDER BY t.name, c.ts"
        ),
        [
            "power.rails.cpu.little|100005000000|1000",
            "power.rails.cpu.little|100055000000|26000",
            "power.rails.gps|100005000000|200",
            "power.rails.gps|100055000000|700",
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.value FROM counter c JOIN counter_track t ON c.track_id = t.id \
             WHERE t.type = 'meminfo' ORDER BY t.name"
        ),
        // /proc/meminfo's kB as bytes.
        [
            "MemAvailable|3993600000",
            "MemFree|1228800000",
            "MemTotal|7987200000"
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value FROM counter c JOIN process_counter_track t \
             ON c.track_id = t.id JOIN process p USING (upid) WHERE p.pid = 4321 \
             AND (t.name GLOB 'mem.*' OR t.name = 'oom_score_adj') ORDER BY t.name"
        ),
        [
            "mem.rss|100040000000|153600000",
            "mem.rss.anon|100040000000|92160000",
            "mem.rss.file|100040000000|59392000",
            "mem.rss.shmem|100040000000|2048000",
            "mem.rss.watermark|100040000000|163840000",
            "mem.swap|100040000000|0",
            "mem.virt|100040000000|15360000000",
            "oom_score_adj|100040000000|0",
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value FROM counter c JOIN counter_track t ON c.track_id = t.id \
             WHERE t.name = 'ScreenState' ORDER BY c.ts"
        ),
        // The system property, then the initial display state.
        ["ScreenState|100002500000|2", "ScreenState|100002600000|2"]
    );
    // What the service said about the session and the device.
    assert_eq!(
        rows(
            &tp,
            "SELECT name, COALESCE(str_value, int_value) FROM metadata WHERE name IN \
             ('android_build_fingerprint', 'android_sdk_version', 'system_name', \
             'system_release', 'system_machine', 'tracing_started_ns', 'tracing_disabled_ns', \
             'all_data_source_started_ns') ORDER BY name"
        ),
        [
            "all_data_source_started_ns|100005000000",
            "android_build_fingerprint|example/device/device:14/AP1A.000000.001/1:userdebug/dev-keys",
            "android_sdk_version|34",
            "system_machine|aarch64",
            "system_name|Linux",
            "system_release|6.1.75-android14-11",
            "tracing_disabled_ns|100060000000",
            "tracing_started_ns|100000001000",
        ]
    );
}
