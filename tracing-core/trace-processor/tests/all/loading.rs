//! The loading core end to end on traces built with `zerotrace_protos`'
//! writers: TrackEvent slices with interned names and debug annotations,
//! counters, sequence loss, `compressed_packets`, any chunking of the
//! bytes, and hostile input that must load what it can without panicking.

use std::io::Write;

use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::{Loader, TraceProcessor, Value};

use crate::common;
use common::{packet, rows, s, trace};

fn slices_trace() -> Vec<u8> {
    trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(10);
            let mut th = td.begin_thread();
            th.set_pid(5);
            th.set_tid(6);
            th.set_thread_name("worker");
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1000);
            p.begin_interned_data()
                .add_event_names()
                .set_iid(1)
                .set_name("outer");
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_type(track_event::Type::SliceBegin);
            e.add_categories("cat");
            e.set_name_iid(1);
            e.add_debug_annotations().set_name("k").set_int_value(42);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1100);
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_type(track_event::Type::SliceBegin);
            e.set_name("inner");
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1200);
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_type(track_event::Type::SliceEnd);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1500);
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_type(track_event::Type::SliceEnd);
        }),
    ])
}

#[test]
fn slices_nest_with_interned_names_and_args() {
    let tp = TraceProcessor::from_bytes(&slices_trace()).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, depth, name, category FROM slice ORDER BY ts"
        ),
        vec![
            vec![
                Value::Int(1000),
                Value::Int(500),
                Value::Int(0),
                s("outer"),
                s("cat")
            ],
            vec![
                Value::Int(1100),
                Value::Int(100),
                Value::Int(1),
                s("inner"),
                Value::Null
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT EXTRACT_ARG(arg_set_id, 'debug.k') FROM slice WHERE name = 'outer'"
        ),
        vec![vec![Value::Int(42)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT thread.name, thread.tid, process.pid FROM slice JOIN thread_track \
             ON slice.track_id = thread_track.id JOIN thread USING (utid) \
             JOIN process USING (upid) WHERE slice.depth = 1"
        ),
        vec![vec![s("worker"), Value::Int(6), Value::Int(5)]]
    );
    assert_eq!(
        rows(&tp, "SELECT parent_id FROM slice WHERE name = 'inner'"),
        vec![vec![Value::Int(0)]]
    );
}

#[test]
fn any_chunking_gives_the_same_tables() {
    let bytes = slices_trace();
    let whole = TraceProcessor::from_bytes(&bytes).unwrap();
    let want = rows(&whole, "SELECT * FROM slice");
    for chunk in [1, 2, 3, 7, 64] {
        let mut l = Loader::new();
        for c in bytes.chunks(chunk) {
            l.push(c).unwrap();
        }
        let tp = TraceProcessor::from_storage(l.finish().unwrap()).unwrap();
        assert_eq!(rows(&tp, "SELECT * FROM slice"), want, "chunks of {chunk}");
    }
}

#[test]
fn compressed_packets_are_expanded() {
    let inner = slices_trace();
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&inner).unwrap();
    let z = enc.finish().unwrap();
    let outer = trace(&[packet(|p| {
        p.set_compressed_packets(&z);
    })]);
    let tp = TraceProcessor::from_bytes(&outer).unwrap();
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM slice"),
        vec![vec![Value::Int(2)]]
    );
    // Garbage in compressed_packets is counted, not fatal.
    let bad = trace(&[packet(|p| {
        p.set_compressed_packets(b"not zlib at all");
    })]);
    let tp = TraceProcessor::from_bytes(&bad).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'tokenizer_skipped_packets'"
        ),
        vec![vec![Value::Int(1)]]
    );
}

#[test]
fn counters_and_packet_loss_are_counted() {
    let bytes = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(2);
            p.set_sequence_flags(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(7);
            td.set_name("mem");
            td.begin_counter();
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(2);
            p.set_timestamp(50);
            let mut e = p.begin_track_event();
            e.set_track_uuid(7);
            e.set_type(track_event::Type::Counter);
            e.set_counter_value(12);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(2);
            p.set_previous_packet_dropped(1);
        }),
        packet(|p| {
            p.set_trusted_uid(0);
            p.set_trusted_packet_sequence_id(1);
            let mut ts = p.begin_trace_stats();
            let mut w = ts.add_writer_stats();
            w.set_sequence_id(2);
            w.set_buffer(0);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT name, ts, value FROM counter JOIN counter_track ct ON ct.id = track_id"
        ),
        vec![vec![s("mem"), Value::Int(50), Value::Real(12.0)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT idx, value FROM stats WHERE name = 'traced_buf_sequence_packet_loss'"
        ),
        vec![vec![Value::Int(0), Value::Int(1)]]
    );
}

#[test]
fn unknown_tracks_are_made_and_missing_interned_names_counted() {
    let bytes = trace(&[packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(5);
        let mut e = p.begin_track_event();
        e.set_track_uuid(99);
        e.set_type(track_event::Type::Instant);
        e.set_name("lonely");
        e.add_debug_annotations().set_name_iid(3).set_int_value(1);
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    // A uuid without a descriptor gets a track, named by its first event.
    assert_eq!(
        rows(
            &tp,
            "SELECT track.name, slice.name FROM slice JOIN track ON track.id = track_id"
        ),
        vec![vec![s("lonely"), s("lonely")]]
    );
    // The annotation's interned name is missing: counted, not invented.
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'track_event_parser_errors'"
        ),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM args WHERE key GLOB 'debug.*'"),
        vec![vec![Value::Int(0)]]
    );
}

#[test]
fn hostile_bytes_never_panic() {
    let good = slices_trace();
    // Every truncation loads (what precedes the cut) or fails with an error.
    for cut in 0..good.len() {
        let _ = TraceProcessor::from_bytes(&good[..cut]);
    }
    // Every single-byte corruption, too.
    for i in 0..good.len() {
        let mut b = good.clone();
        b[i] ^= 0xa5;
        let _ = TraceProcessor::from_bytes(&b);
    }
    assert!(TraceProcessor::from_bytes(&[0x0f, 0xff]).is_err());
}

#[test]
fn bad_sql_reports_the_position() {
    let tp = TraceProcessor::from_bytes(&[]).unwrap();
    let e = tp
        .query("SELECT * FROM slice WHERE")
        .unwrap_err()
        .to_string();
    assert!(e.contains("SQL error"), "{e}");
    let e = tp
        .query("SELECT nosuchcolumn FROM slice")
        .unwrap_err()
        .to_string();
    assert!(e.contains("nosuchcolumn"), "{e}");
}

#[test]
fn process_tree_and_process_stats() {
    // process_tree (packet field 2) and process_stats (field 9) are not in
    // our schemas yet: written with the raw message API, upstream's numbers.
    let tree = packet(|p| {
        p.set_timestamp(10);
        let m = p.message();
        let mut tree = m.begin_nested(2);
        {
            let mut proc_ = tree.begin_nested(1);
            proc_.append_int32(1, 28);
            proc_.append_int32(2, 2);
            proc_.append_string(3, "kworker/1:0-events");
            proc_.append_bool(9, true);
            proc_.append_bool(8, true);
        }
        {
            let mut proc_ = tree.begin_nested(1);
            proc_.append_int32(1, 100);
            proc_.append_int32(2, 1);
            proc_.append_string(3, "/bin/app");
            proc_.append_string(3, "--flag");
            proc_.append_int32(5, 1_010_123);
        }
        {
            let mut th = tree.begin_nested(2);
            th.append_int32(1, 101);
            th.append_int32(3, 100);
            th.append_string(2, "worker");
        }
    });
    let stats = packet(|p| {
        p.set_timestamp(20);
        let m = p.message();
        let mut st = m.begin_nested(9);
        let mut proc_ = st.begin_nested(1);
        proc_.append_int32(1, 100);
        proc_.append_uint64(3, 4);
        proc_.append_uint64(21, 777);
    });
    let tp = TraceProcessor::from_bytes(&trace(&[tree, stats])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT pid, name, cmdline, uid, android_appid, EXTRACT_ARG(arg_set_id, 'is_kthread') FROM process WHERE pid IN (28, 100) ORDER BY pid"
        ),
        vec![
            vec![
                Value::Int(28),
                s("kworker/1:0"),
                s("kworker/1:0"),
                Value::Null,
                Value::Null,
                Value::Int(1)
            ],
            vec![
                Value::Int(100),
                s("/bin/app"),
                s("/bin/app --flag"),
                Value::Int(1_010_123),
                Value::Int(10_123),
                Value::Null
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, p.pid FROM thread t JOIN process p USING (upid) WHERE tid = 101"
        ),
        vec![vec![s("worker"), Value::Int(100)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value FROM counter c JOIN process_counter_track t ON c.track_id = t.id ORDER BY t.name"
        ),
        vec![
            vec![s("mem.rss"), Value::Int(20), Value::Real(4096.0)],
            vec![s("runtime.user_ns"), Value::Int(20), Value::Real(777.0)],
        ]
    );
}

#[test]
fn cpu_info_makes_cpus_clusters_and_frequencies() {
    let info = packet(|p| {
        let m = p.message();
        let mut info = m.begin_nested(67);
        for (max, features) in [(1000u64, 0u64), (2000, 1), (1000, 1 << 5)] {
            let mut cpu = info.begin_nested(1);
            cpu.append_string(1, "core");
            cpu.append_uint64(2, 500);
            cpu.append_uint64(2, max);
            cpu.append_uint64(5, features);
        }
    });
    let tp = TraceProcessor::from_bytes(&trace(&[info])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT cpu, cluster_id, EXTRACT_ARG(arg_set_id, 'cpu_features.mte') FROM cpu ORDER BY cpu"
        ),
        vec![
            vec![Value::Int(0), Value::Int(0), Value::Null],
            vec![Value::Int(1), Value::Int(1), Value::Int(1)],
            vec![Value::Int(2), Value::Int(0), Value::Null],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*) FROM cpu_available_frequencies WHERE freq = 500"
        ),
        vec![vec![Value::Int(3)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'cpu_info_unknown_cpu_features'"
        ),
        vec![vec![Value::Int(1)]]
    );
    // And an import log of the whole packet, with no time or place.
    assert_eq!(
        rows(&tp, "SELECT name, ts, byte_offset FROM _trace_import_logs"),
        vec![vec![
            Value::Text("cpu_info_unknown_cpu_features".into()),
            Value::Null,
            Value::Null
        ]]
    );
}

#[test]
fn ftrace_print_is_atrace_sorted_event_by_event() {
    // ftrace_events (packet field 1) with print events; the second bundle
    // holds an earlier event than the first's last: each event sorts alone.
    let bundle = |cpu: u32, events: &[(u64, i32, &str)]| {
        let events = events.to_vec();
        packet(move |p| {
            let m = p.message();
            let mut b = m.begin_nested(1);
            b.append_uint32(1, cpu);
            for (ts, pid, buf) in events {
                let mut e = b.begin_nested(2);
                e.append_uint64(1, ts);
                e.append_uint32(2, pid as u32);
                e.begin_nested(3).append_string(2, buf);
            }
        })
    };
    let bytes = trace(&[
        bundle(0, &[(100, 7, "B|5|outer\n"), (400, 7, "E|5\n")]),
        bundle(
            1,
            &[
                (200, 7, "B|5|inner\n"),
                (300, 7, "E|5\n"),
                (250, 7, "C|5|queue|3\n"),
            ],
        ),
        bundle(1, &[(260, 7, "not systrace at all\n")]),
    ]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(&tp, "SELECT name, ts, dur, depth FROM slice ORDER BY ts"),
        vec![
            vec![s("outer"), Value::Int(100), Value::Int(300), Value::Int(0)],
            vec![s("inner"), Value::Int(200), Value::Int(100), Value::Int(1)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.tid, p.pid FROM slice JOIN thread_track tt ON slice.track_id = tt.id JOIN thread t USING (utid) JOIN process p USING (upid) LIMIT 1"
        ),
        vec![vec![Value::Int(7), Value::Int(5)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.value FROM counter c JOIN process_counter_track t ON c.track_id = t.id"
        ),
        vec![vec![s("queue"), Value::Real(3.0)]]
    );
}

#[test]
fn sys_stats_and_initial_display_state_are_counters() {
    use zerotrace_protos::protos::SysStats;
    let stats = |ts: u64, temp: u64, mhz: u64| {
        packet(move |p| {
            p.set_timestamp(ts);
            let mut s = SysStats::from_message(p.message().begin_nested(7));
            s.add_thermal_zone().set_temp(temp).set_type("soc");
            s.add_gpufreq_mhz(mhz);
        })
    };
    let display = packet(|p| {
        p.set_timestamp(5);
        p.message().begin_nested(70).append_int32(1, 2);
    });
    let tp = TraceProcessor::from_bytes(&trace(&[stats(10, 40, 300), stats(20, 41, 350), display]))
        .unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value, t.unit FROM counter c JOIN counter_track t ON c.track_id = t.id ORDER BY t.name, c.ts"
        ),
        vec![
            vec![
                s("ScreenState"),
                Value::Int(5),
                Value::Real(2.0),
                Value::Null
            ],
            vec![s("gpufreq"), Value::Int(10), Value::Real(300.0), s("MHz")],
            vec![s("gpufreq"), Value::Int(20), Value::Real(350.0), s("MHz")],
            vec![s("soc"), Value::Int(10), Value::Real(40.0), s("C")],
            vec![s("soc"), Value::Int(20), Value::Real(41.0), s("C")],
        ]
    );
}

#[test]
fn ftrace_cpu_counters() {
    // cpu_frequency_limits (FtraceEvent field 12: min 1, max 2, cpu 3) and
    // f2fs_iostat (419; dev 9, app_bio 1), upstream's numbers.
    let bytes = trace(&[packet(|p| {
        let m = p.message();
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, 50);
            let mut l = e.begin_nested(12);
            l.append_uint32(1, 300);
            l.append_uint32(2, 900);
            l.append_uint32(3, 2);
        }
        {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, 60);
            let mut io = e.begin_nested(419);
            io.append_uint64(9, 0xfe20);
            io.append_uint64(1, 77);
        }
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.value FROM counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name GLOB 'Cpu*' OR t.name GLOB '*write_app_buffered' ORDER BY t.name"
        ),
        vec![
            vec![s("Cpu 2 Max Freq Limit"), Value::Real(900.0)],
            vec![s("Cpu 2 Min Freq Limit"), Value::Real(300.0)],
            vec![
                s("f2fs_iostat.[254:32].write_app_buffered"),
                Value::Real(77.0)
            ],
        ]
    );
}

#[test]
fn task_newtask_starts_processes_and_threads_and_tid_zero_is_the_swapper() {
    // task_newtask: FtraceEvent field 235 {pid 1, comm 2, clone_flags 3}.
    let task =
        |e: &mut protozero::Message<'_>, ts: u64, source: u32, pid: i32, comm: &str, flags: u64| {
            e.append_uint64(1, ts);
            e.append_uint32(2, source);
            let mut t = e.begin_nested(235);
            t.append_int32(1, pid);
            t.append_string(2, comm);
            t.append_uint64(3, flags);
        };
    let bytes = trace(&[packet(|p| {
        let m = p.message();
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        task(&mut b.begin_nested(2), 10, 1, 0, "swapper/0", 0x100);
        task(&mut b.begin_nested(2), 20, 1, 50, "daemon", 0);
        task(
            &mut b.begin_nested(2),
            30,
            50,
            51,
            "daemon-worker",
            0x0001_0000,
        );
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(&tp, "SELECT utid, name FROM thread WHERE tid = 0"),
        vec![vec![Value::Int(0), s("swapper")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.tid, t.name, p.pid, p.name FROM thread t JOIN process p USING (upid) WHERE t.tid IN (50, 51) ORDER BY t.tid"
        ),
        vec![
            vec![Value::Int(50), s("daemon"), Value::Int(50), s("daemon")],
            vec![
                Value::Int(51),
                s("daemon-worker"),
                Value::Int(50),
                s("daemon")
            ],
        ]
    );
}

#[test]
fn concurrent_sessions_are_state_tracks() {
    // concurrent_session_event: packet field 134 {state 1, session_name 2,
    // session_id 3, consumer_uid 4, num_data_sources 5}.
    let ev = |ts: u64, state: u64, id: u64| {
        packet(move |p| {
            p.set_timestamp(ts);
            let mut e = p.message().begin_nested(134);
            e.append_uint64(1, state);
            e.append_uint64(3, id);
            e.append_int32(4, 1000);
        })
    };
    let tp = TraceProcessor::from_bytes(&trace(&[ev(10, 3, 4), ev(30, 1, 4)])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, s.ts, s.dur, s.value, EXTRACT_ARG(s.arg_set_id, 'consumer_uid') FROM state s JOIN track t ON s.track_id = t.id WHERE t.type = 'concurrent_tracing_sessions' ORDER BY s.ts"
        ),
        vec![
            vec![
                s("Session 4"),
                Value::Int(10),
                Value::Int(20),
                s("STARTED"),
                Value::Int(1000)
            ],
            vec![
                s("Session 4"),
                Value::Int(30),
                Value::Int(0),
                s("DISABLED"),
                Value::Int(1000)
            ],
        ]
    );
}

#[test]
fn kernel_marks_oom_victims_and_ion() {
    // FtraceEvent fields: tracing_mark_write 80 {pid 1, trace_name 2,
    // trace_begin 3}; mark_victim 334 {pid 1}; ion_stat 335 {len 2,
    // total_allocated 3}.
    let bytes = trace(&[packet(|p| {
        let m = p.message();
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        for (ts, begin) in [(100u64, 1u32), (250, 0)] {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, ts);
            e.append_uint32(2, 9);
            let mut w = e.begin_nested(80);
            w.append_int32(1, 8);
            w.append_string(2, "frame");
            w.append_uint32(3, begin);
        }
        {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, 300);
            e.append_uint32(2, 9);
            e.begin_nested(334).append_int32(1, 9);
        }
        {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, 400);
            e.append_uint32(2, 9);
            let mut ion = e.begin_nested(335);
            ion.append_int64(2, 10);
            ion.append_uint64(3, 4096);
        }
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT s.name, s.ts, s.dur, t.tid FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid) ORDER BY s.ts"
        ),
        vec![
            vec![s("frame"), Value::Int(100), Value::Int(150), Value::Int(9)],
            vec![
                s("mem.oom_kill"),
                Value::Int(300),
                Value::Int(0),
                Value::Int(9)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.value FROM counter c JOIN track t ON c.track_id = t.id ORDER BY t.name"
        ),
        vec![
            vec![s("mem.ion"), Value::Real(4096.0)],
            vec![s("mem.ion_change"), Value::Real(10.0)]
        ]
    );
}

#[test]
fn event_thread_time_is_a_thread_counter_and_slice_thread_time() {
    let bytes = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(3);
            let mut th = td.begin_thread();
            th.set_pid(1);
            th.set_tid(2);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(100);
            let mut e = p.begin_track_event();
            e.set_track_uuid(3);
            e.set_type(track_event::Type::SliceBegin);
            e.set_name("s");
            e.set_thread_time_absolute_us(7);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(200);
            let mut e = p.begin_track_event();
            e.set_track_uuid(3);
            e.set_type(track_event::Type::SliceEnd);
            e.set_thread_time_absolute_us(9);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(&tp, "SELECT thread_ts, thread_dur FROM slice"),
        vec![vec![Value::Int(7000), Value::Int(2000)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value FROM counter c JOIN thread_counter_track t ON c.track_id = t.id ORDER BY c.ts"
        ),
        vec![
            vec![s("thread_time"), Value::Int(100), Value::Real(7000.0)],
            vec![s("thread_time"), Value::Int(200), Value::Real(9000.0)],
        ]
    );
}

#[test]
fn a_track_event_on_a_clock_snapshotted_later_is_converted_at_the_end() {
    // Clock 64 (this sequence's own) is unknown when the events are read:
    // they wait for the end of the trace, when a later snapshot says 1000
    // on it is 5000 on BOOTTIME. Both the event with thread time (whose
    // times wait beside it) and the one without land at the converted time.
    let event = |ts: u64, ty: track_event::Type, thread_time: Option<i64>| {
        packet(move |p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts);
            p.set_timestamp_clock_id(64);
            let mut e = p.begin_track_event();
            e.set_track_uuid(3);
            e.set_type(ty);
            e.set_name("s");
            if let Some(t) = thread_time {
                e.set_thread_time_absolute_us(t);
            }
        })
    };
    let bytes = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(3);
            td.set_name("t");
        }),
        event(1000, track_event::Type::SliceBegin, Some(7)),
        event(1100, track_event::Type::SliceEnd, Some(9)),
        event(1200, track_event::Type::SliceBegin, None),
        event(1300, track_event::Type::SliceEnd, None),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            let mut cs = p.begin_clock_snapshot();
            {
                let mut c = cs.add_clocks();
                c.set_clock_id(64);
                c.set_timestamp(1000);
            }
            let mut c = cs.add_clocks();
            c.set_clock_id(6);
            c.set_timestamp(5000);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(&tp, "SELECT ts, dur FROM slice ORDER BY ts"),
        vec![
            vec![Value::Int(5000), Value::Int(100)],
            vec![Value::Int(5200), Value::Int(100)],
        ]
    );
}
