//! The standard library's smaller `chrome.*` modules on track event traces
//! built here: the hardware class (`chrome.metadata`), histogram samples
//! (`chrome.histograms`), VSync intervals (`chrome.vsync_intervals`), page
//! loads, startups and all interactions (`chrome.page_loads`,
//! `chrome.startups`, `chrome.interactions`) and web content interactions
//! (`chrome.web_content_interactions`), checked against what each trace
//! says. The input, graphics and benchmark modules are
//! `stdlib_chrome_input.rs`'s, on these helpers.

use zerotrace_protos::protos::{TrackEvent, track_event};
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TrackEvent.chrome_histogram_sample`.
const CHROME_HISTOGRAM_SAMPLE: u32 = 28;
/// `ChromeTrackEvent.web_content_interaction` (an extension of TrackEvent).
const WEB_CONTENT_INTERACTION: u32 = 1058;

pub(crate) fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

/// Track `uuid` of thread `tid` of process `pid`.
pub(crate) fn thread_track(uuid: u64, pid: i32, tid: i32, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(uuid);
        let mut th = td.begin_thread();
        th.set_pid(pid);
        th.set_tid(i64::from(tid));
        th.set_thread_name(name);
    })
}

/// Track `uuid` of process `pid`.
pub(crate) fn process_track(uuid: u64, pid: i32, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(uuid);
        td.begin_process().set_pid(pid).set_process_name(name);
    })
}

/// A complete slice `name` of `category` on track `uuid` from `ts` to
/// `end`, its begin event given more fields by `extra`.
pub(crate) fn slice(
    ts: u64,
    end: u64,
    uuid: u64,
    category: &str,
    name: &str,
    extra: impl FnOnce(&mut TrackEvent<'_>),
) -> [Vec<u8>; 2] {
    let begin = packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.set_type(track_event::Type::SliceBegin);
        e.set_track_uuid(uuid);
        e.add_categories(category);
        e.set_name(name);
        extra(&mut e);
    });
    let finish = packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(end);
        let mut e = p.begin_track_event();
        e.set_type(track_event::Type::SliceEnd);
        e.set_track_uuid(uuid);
    });
    [begin, finish]
}

#[test]
fn histogram_samples_take_their_thread_or_process() {
    let sample = |name: &'static str, value: i64| {
        move |e: &mut TrackEvent<'_>| {
            let mut h = e.message().begin_nested(CHROME_HISTOGRAM_SAMPLE);
            h.append_string(2, name);
            h.append_int64(3, value);
        }
    };
    let mut packets = vec![
        process_track(1, 10, "Browser"),
        thread_track(2, 10, 11, "CrBrowserMain"),
    ];
    let cat = "disabled-by-default-histogram_samples";
    packets.extend(slice(
        100,
        100,
        2,
        cat,
        "HistogramSample",
        sample("Mem.A", 42),
    ));
    packets.extend(slice(
        200,
        200,
        1,
        cat,
        "HistogramSample",
        sample("Mem.B", 7),
    ));
    packets.extend(slice(
        300,
        300,
        2,
        "other",
        "HistogramSample",
        sample("Mem.C", 1),
    ));
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.histograms;
             SELECT name, value, ts, thread_name, tid, process_name, pid
             FROM chrome_histograms ORDER BY ts"
        ),
        vec![
            vec![
                s("Mem.A"),
                i(42),
                i(100),
                s("CrBrowserMain"),
                i(11),
                s("Browser"),
                i(10)
            ],
            vec![
                s("Mem.B"),
                i(7),
                i(200),
                Value::Null,
                Value::Null,
                s("Browser"),
                i(10)
            ],
        ]
    );
}

#[test]
fn vsync_intervals_are_the_time_to_the_next_vsync() {
    let mut packets = vec![thread_track(2, 10, 11, "VizCompositorThread")];
    for ts in [1_000u64, 17_000, 33_000, 45_000] {
        packets.extend(slice(ts, ts + 10, 2, "Java", "VSync", |_| {}));
    }
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.vsync_intervals;
             SELECT ts, dur, time_to_next_vsync FROM chrome_vsync_intervals"
        ),
        vec![
            vec![i(1_000), i(10), i(16_000)],
            vec![i(17_000), i(10), i(16_000)],
            vec![i(33_000), i(10), i(12_000)],
            vec![i(45_000), i(10), Value::Null],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT chrome_calculate_avg_vsync_interval(1000, 50000),
                    chrome_calculate_avg_vsync_interval(50000, 60000)"
        ),
        vec![vec![Value::Real(14_000.0), Value::Real(1e9 / 60.0)]]
    );
}

#[test]
fn web_content_interactions_are_the_renderers_web_interaction_slices() {
    let mut packets = vec![process_track(1, 20, "Renderer")];
    packets.extend(slice(100, 350, 1, "latency", "Web Interaction", |e| {
        e.message()
            .begin_nested(WEB_CONTENT_INTERACTION)
            .append_int32(1, 2);
    }));
    packets.extend(slice(400, 500, 1, "latency", "Other", |_| {}));
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.web_content_interactions;
             SELECT w.ts, w.dur, w.interaction_type, p.pid
             FROM chrome_web_content_interactions w JOIN process p ON p.upid = w.renderer_upid"
        ),
        vec![vec![i(100), i(250), s("INTERACTION_CLICK_TAP"), i(20)]]
    );
}

/// `TracePacket.chrome_events`.
const CHROME_EVENTS: u32 = 5;

#[test]
fn the_hardware_class_is_chromes_metadata_entry() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    let query = "INCLUDE PERFETTO MODULE chrome.metadata; SELECT chrome_hardware_class()";
    assert_eq!(rows(&tp, query), vec![vec![Value::Null]]);
    // A ChromeEventBundle's metadata entry (field 2: name 1, string 2).
    let bundle = packet(|p| {
        p.set_timestamp(1);
        let mut m = p.message().begin_nested(CHROME_EVENTS);
        let mut entry = m.begin_nested(2);
        entry.append_string(1, "hardware-class");
        entry.append_string(2, "Google Pixel 7");
    });
    let tp = load(&[bundle]);
    assert_eq!(rows(&tp, query), vec![vec![s("Google Pixel 7")]]);
}

/// `ChromeTrackEvent.page_load`.
const PAGE_LOAD: u32 = 1056;
/// `ChromeTrackEvent.startup`.
const STARTUP: u32 = 1057;

#[test]
fn page_loads_startups_and_interactions_are_joined_by_their_ids() {
    let page = |navigation: i64, url: Option<&'static str>| {
        move |e: &mut TrackEvent<'_>| {
            let mut m = e.message().begin_nested(PAGE_LOAD);
            m.append_int64(1, navigation);
            if let Some(u) = url {
                m.append_string(2, u);
            }
        }
    };
    let startup = |activity: i64, cause: Option<i32>| {
        move |e: &mut TrackEvent<'_>| {
            let mut m = e.message().begin_nested(STARTUP);
            m.append_int64(1, activity);
            if let Some(c) = cause {
                m.append_int32(3, c);
            }
        }
    };
    let mut packets = vec![
        process_track(1, 10, "Browser"),
        thread_track(2, 10, 11, "CrBrowserMain"),
        process_track(3, 20, "Renderer"),
    ];
    let cat = "loading";
    // Each metric on an async track of its own under the browser.
    for (k, (ts, end, name, nav, url)) in [
        (
            1_000,
            3_000,
            "NavigationToFirstContentfulPaint",
            7,
            Some("https://a.test/"),
        ),
        (1_000, 5_000, "NavigationToLargestContentfulPaint", 7, None),
        (
            1_000,
            4_000,
            "NavigationToDOMContentLoadedEventFired",
            7,
            None,
        ),
        (1_000, 6_000, "UserTimingMarkInteractive", 7, None),
        (
            8_000,
            9_000,
            "NavigationToFirstContentfulPaint",
            8,
            Some("https://b.test/"),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let uuid = 100 + k as u64;
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(uuid);
            td.set_parent_uuid(1);
            td.set_name("PageLoadMetrics");
        }));
        let name = format!("PageLoadMetrics.{name}");
        packets.extend(slice(ts, end, uuid, cat, &name, page(nav, url)));
    }
    packets.extend(slice(
        10_000,
        10_100,
        2,
        cat,
        "Startup.ActivityStart",
        startup(3, None),
    ));
    packets.extend(slice(
        10_050,
        10_060,
        2,
        cat,
        "Startup.LaunchCause",
        startup(3, Some(6)),
    ));
    packets.extend(slice(
        10_020,
        12_000,
        1,
        cat,
        "Startup.TimeToFirstVisibleContent2",
        startup(3, None),
    ));
    packets.extend(slice(
        13_000,
        13_100,
        2,
        cat,
        "Startup.ActivityStart",
        startup(4, None),
    ));
    packets.extend(slice(14_000, 14_500, 3, cat, "Web Interaction", |e| {
        e.message()
            .begin_nested(WEB_CONTENT_INTERACTION)
            .append_int32(1, 1);
    }));
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.page_loads;
             SELECT id, navigation_id, navigation_start_ts, fcp, fcp_ts, lcp, lcp_ts,
                    dom_content_loaded_event_ts, load_event_ts, mark_interactive_ts, url
             FROM chrome_page_loads ORDER BY id"
        ),
        vec![
            vec![
                i(1),
                i(7),
                i(1_000),
                i(2_000),
                i(3_000),
                i(4_000),
                i(5_000),
                i(1_000),
                Value::Null,
                i(1_000),
                s("https://a.test/"),
            ],
            vec![
                i(2),
                i(8),
                i(8_000),
                i(1_000),
                i(9_000),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                s("https://b.test/"),
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.startups;
             SELECT id, activity_id, name, startup_begin_ts, first_visible_content_ts, launch_cause
             FROM chrome_startups ORDER BY id"
        ),
        vec![
            vec![
                i(1),
                i(3),
                s("Startup"),
                i(10_020),
                i(12_000),
                s("MAIN_LAUNCHER_ICON")
            ],
            vec![
                i(2),
                i(4),
                s("Startup"),
                i(13_000),
                Value::Null,
                Value::Null
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.interactions;
             SELECT scoped_id, type, name, ts, dur FROM chrome_interactions ORDER BY ts"
        ),
        vec![
            vec![
                i(1),
                s("chrome_page_loads"),
                s("PageLoad"),
                i(1_000),
                i(4_000)
            ],
            vec![
                i(2),
                s("chrome_page_loads"),
                s("PageLoad"),
                i(8_000),
                i(1_000)
            ],
            vec![
                i(1),
                s("chrome_startups"),
                s("Startup"),
                i(10_020),
                i(1_980)
            ],
            vec![i(2), s("chrome_startups"), s("Startup"), i(13_000), i(0)],
            // A web content interaction's id is its slice's.
            vec![
                i(9),
                s("chrome_web_content_interactions"),
                s("InteractionToFirstPaint"),
                i(14_000),
                i(500)
            ],
        ]
    );
}
