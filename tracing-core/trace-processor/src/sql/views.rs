//! The public tables as views over the intrinsic ones, with Perfetto's
//! names and column order: `slice`, `thread`, `process`, `args` (with
//! `display_value`), `track` and its kinds selected by dimension and event
//! type, `counter`, `state`, `flow`, `stats`, `metadata`, `machine`.

/// The statements that create the views.
pub const VIEWS: &str = r#"
CREATE VIEW slice AS SELECT id, ts, dur, track_id, category, name, depth, parent_id,
  arg_set_id, thread_ts, thread_dur, thread_instruction_count, thread_instruction_delta,
  category AS cat, id AS slice_id FROM __intrinsic_slice;
CREATE VIEW slices AS SELECT * FROM slice;
CREATE VIEW instant AS SELECT ts, track_id, name, arg_set_id FROM slice WHERE dur = 0;
CREATE VIEW thread AS SELECT id AS utid, id, tid, name, start_ts, end_ts, upid,
  is_main_thread, is_idle, machine_id, arg_set_id FROM __intrinsic_thread;
CREATE VIEW process AS SELECT id AS upid, id, pid, name, start_ts, end_ts, parent_upid,
  uid, android_appid, android_user_id, cmdline, arg_set_id, machine_id FROM __intrinsic_process;
CREATE VIEW args AS SELECT id, arg_set_id, flat_key, key, int_value, string_value,
  real_value, value_type,
  CASE value_type
    WHEN 'int' THEN CAST(int_value AS TEXT)
    WHEN 'uint' THEN printf('%u', int_value)
    WHEN 'string' THEN string_value
    WHEN 'real' THEN CAST(real_value AS TEXT)
    WHEN 'pointer' THEN printf('0x%x', int_value)
    WHEN 'bool' THEN (CASE WHEN int_value != 0 THEN 'true' ELSE 'false' END)
    WHEN 'json' THEN string_value
    ELSE NULL
  END AS display_value
  FROM __intrinsic_args;
CREATE VIEW counter AS SELECT id, ts, track_id, value, arg_set_id FROM __intrinsic_counter;
CREATE VIEW state AS SELECT id, ts, dur, track_id, category, value, arg_set_id FROM __intrinsic_state;
CREATE VIEW flow AS SELECT id, slice_out, slice_in, trace_id, arg_set_id FROM __intrinsic_flow;
CREATE VIEW track AS SELECT id, name, type, dimension_arg_set_id, parent_id,
  source_arg_set_id, machine_id, track_group_id FROM __intrinsic_track;
CREATE VIEW thread_track AS SELECT id, name, type, parent_id, source_arg_set_id,
  machine_id, utid FROM __intrinsic_track WHERE event_type = 'slice' AND utid IS NOT NULL;
CREATE VIEW process_track AS SELECT id, name, type, parent_id, source_arg_set_id,
  machine_id, upid FROM __intrinsic_track WHERE event_type = 'slice' AND upid IS NOT NULL;
CREATE VIEW counter_track AS SELECT id, name, parent_id, type, dimension_arg_set_id,
  source_arg_set_id, machine_id, counter_unit AS unit,
  extract_arg(source_arg_set_id, 'description') AS description
  FROM __intrinsic_track WHERE event_type = 'counter';
CREATE VIEW process_counter_track AS SELECT id, name, type, parent_id,
  source_arg_set_id, machine_id, counter_unit AS unit,
  extract_arg(source_arg_set_id, 'description') AS description, upid
  FROM __intrinsic_track WHERE event_type = 'counter' AND upid IS NOT NULL;
CREATE VIEW thread_counter_track AS SELECT id, name, type, parent_id,
  source_arg_set_id, machine_id, counter_unit AS unit,
  extract_arg(source_arg_set_id, 'description') AS description, utid
  FROM __intrinsic_track WHERE event_type = 'counter' AND utid IS NOT NULL;
CREATE VIEW state_track AS SELECT id, name, parent_id, type, dimension_arg_set_id,
  source_arg_set_id, machine_id FROM __intrinsic_track WHERE event_type = 'state';
CREATE VIEW process_state_track AS SELECT id, name, type, parent_id, source_arg_set_id,
  machine_id, upid FROM __intrinsic_track WHERE event_type = 'state' AND upid IS NOT NULL;
CREATE VIEW thread_state_track AS SELECT id, name, type, parent_id, source_arg_set_id,
  machine_id, utid FROM __intrinsic_track WHERE event_type = 'state' AND utid IS NOT NULL;
CREATE VIEW cpu AS SELECT id, id AS ucpu, cpu, cluster_id, processor, machine_id,
  capacity, arg_set_id FROM __intrinsic_cpu WHERE cpu IS NOT NULL;
CREATE VIEW cpu_available_frequencies AS SELECT id, ucpu AS cpu, freq, ucpu
  FROM __intrinsic_cpu_freq;
CREATE VIEW stats AS SELECT id, name, idx AS key, idx, severity, source, value,
  description, machine_id, trace_id FROM __intrinsic_stats;
CREATE VIEW machine AS SELECT *,
  iif(raw_id = 0, 0, sum(iif(raw_id = 0, 0, 1)) OVER (ORDER BY id)) AS label_index
  FROM __intrinsic_machine;
CREATE VIEW metadata AS SELECT id, name, key_type, int_value, str_value, machine_id,
  trace_id FROM __intrinsic_metadata;
"#;
