//! The public views that are more than a projection of one table, with
//! Perfetto's names and column order: `slices` (another name of `slice`),
//! `instant` (slices of no duration), `counters` (each counter value with
//! its track's name and unit, in time order), and the track kinds whose
//! dimension is an arg rather than a column: `cpu_track` (slice tracks of
//! one CPU), `cpu_counter_track`, `gpu_counter_track` (by the `ugpu`
//! dimension) and `gpu_track` (the GPU's kinds of track, by type). The
//! views that project one table (`slice`, `thread`, `process`, `args`,
//! `track` and its kinds, `counter`, `state`, `flow`, `cpu`, `stats`,
//! `metadata`, `machine`, ...) take their column lists from the tables'
//! declarations (`tables/views.rs`) and are created first.

/// The statements that create the views.
pub const VIEWS: &str = r#"
CREATE VIEW slices AS SELECT * FROM slice;
CREATE VIEW instant AS SELECT ts, track_id, name, arg_set_id FROM slice WHERE dur = 0;
CREATE VIEW counters AS
  SELECT v.id, v.ts, v.track_id, v.value, v.arg_set_id, t.name, t.unit
  FROM counter AS v JOIN counter_track AS t ON v.track_id = t.id
  ORDER BY v.ts;
CREATE VIEW cpu_track AS
  SELECT t.id, t.name, t.type, t.parent_id, t.source_arg_set_id, t.machine_id,
    a.int_value AS cpu
  FROM __intrinsic_track AS t JOIN args AS a ON t.dimension_arg_set_id = a.arg_set_id
  WHERE t.event_type = 'slice' AND a.key = 'cpu';
CREATE VIEW cpu_counter_track AS
  SELECT ct.id, ct.name, ct.type, ct.parent_id, ct.source_arg_set_id, ct.machine_id,
    ct.unit, ct.description, a.int_value AS cpu
  FROM counter_track AS ct JOIN args AS a ON ct.dimension_arg_set_id = a.arg_set_id
  WHERE a.key = 'cpu';
CREATE VIEW gpu_counter_track AS
  SELECT ct.id, ct.name, ct.type, ct.parent_id, ct.source_arg_set_id, ct.machine_id,
    ct.unit, ct.description,
    extract_arg(ct.dimension_arg_set_id, 'ugpu') AS ugpu,
    extract_arg(ct.dimension_arg_set_id, 'gpu') AS gpu_id
  FROM counter_track AS ct JOIN args AS a ON ct.dimension_arg_set_id = a.arg_set_id
  WHERE a.key = 'ugpu';
CREATE VIEW gpu_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, dimension_arg_set_id, machine_id,
    type AS scope,
    extract_arg(source_arg_set_id, 'description') AS description,
    extract_arg(dimension_arg_set_id, 'context_id') AS context_id
  FROM __intrinsic_track
  WHERE type IN ('drm_vblank', 'drm_sched_ring', 'drm_fence', 'mali_mcu_state',
    'gpu_render_stage', 'vulkan_events', 'gpu_log', 'graphics_frame_event');
"#;

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::storage::args::ArgSetBuilder;
    use crate::tables::args::ArgValue;
    use crate::tables::core::{CounterRow, TrackRow};
    use crate::{TraceProcessor, Value};

    /// Track 0: a slice track of CPU 2; track 1: a counter track of CPU 3
    /// in `ns`; track 2: a counter track of GPU 1; track 3: a render
    /// stage track; track 4: a slice track of no CPU.
    fn trace() -> TraceProcessor {
        let mut s = Storage::default();
        let mut dims = |key: &str, v: i64| {
            let k = s.strings.intern(key);
            let mut b = ArgSetBuilder::default();
            b.add(k, k, ArgValue::Int(v));
            s.args.add_set(&b)
        };
        let (cpu2, cpu3, gpu1) = (dims("cpu", 2), dims("cpu", 3), dims("ugpu", 1));
        let slice = s.strings.intern("slice");
        let counter = s.strings.intern("counter");
        let ns = s.strings.intern("ns");
        let mut track = |name: &str, ty: &str, event_type, dims, unit| {
            let name = s.strings.intern(name);
            let classification = s.strings.intern(ty);
            s.tracks.push(TrackRow {
                name,
                classification,
                dimension_arg_set_id: dims,
                event_type,
                counter_unit: unit,
                ..Default::default()
            });
        };
        track("sched", "cpu_sched", slice, cpu2, Default::default());
        track("freq", "cpu_frequency", counter, cpu3, ns);
        track(
            "gpufreq",
            "gpu_frequency",
            counter,
            gpu1,
            Default::default(),
        );
        track(
            "render",
            "gpu_render_stage",
            slice,
            None,
            Default::default(),
        );
        track("other", "thread", slice, None, Default::default());
        for (ts, track_id) in [(30, 1), (10, 1), (20, 2)] {
            s.counters.push(CounterRow {
                ts,
                track_id,
                value: 1.5,
                ..Default::default()
            });
        }
        TraceProcessor::from_storage(s).expect("engine")
    }

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect(sql).rows
    }

    #[test]
    fn cpu_and_gpu_tracks_are_found_by_their_dimension() {
        let tp = trace();
        assert_eq!(
            rows(&tp, "SELECT id, cpu FROM cpu_track"),
            vec![vec![Value::Int(0), Value::Int(2)]]
        );
        assert_eq!(
            rows(&tp, "SELECT id, cpu, unit FROM cpu_counter_track"),
            vec![vec![Value::Int(1), Value::Int(3), Value::Text("ns".into())]]
        );
        assert_eq!(
            rows(&tp, "SELECT id, ugpu, gpu_id FROM gpu_counter_track"),
            vec![vec![Value::Int(2), Value::Int(1), Value::Null]]
        );
        assert_eq!(
            rows(&tp, "SELECT id, scope FROM gpu_track"),
            vec![vec![Value::Int(3), Value::Text("gpu_render_stage".into())]]
        );
    }

    #[test]
    fn counters_carry_their_track_s_name_and_unit_in_time_order() {
        let tp = trace();
        let r = tp.query("SELECT * FROM counters").expect("query");
        assert_eq!(
            r.columns,
            [
                "id",
                "ts",
                "track_id",
                "value",
                "arg_set_id",
                "name",
                "unit"
            ]
        );
        let ts_name: Vec<_> = r
            .rows
            .iter()
            .map(|r| (r[1].clone(), r[5].clone()))
            .collect();
        assert_eq!(
            ts_name,
            [
                (Value::Int(10), Value::Text("freq".into())),
                (Value::Int(20), Value::Text("gpufreq".into())),
                (Value::Int(30), Value::Text("freq".into())),
            ]
        );
    }

    #[test]
    fn an_empty_trace_has_the_views_empty() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        for v in [
            "counters",
            "cpu_track",
            "cpu_counter_track",
            "gpu_counter_track",
            "gpu_track",
        ] {
            assert_eq!(
                rows(&tp, &format!("SELECT * FROM {v}")),
                Vec::<Vec<Value>>::new()
            );
        }
    }
}
