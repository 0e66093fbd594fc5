//! The graphics views over `slice`: the GPU and graphics importers write
//! their slices' details as args (upstream's keys), and these views read
//! them back as columns, with upstream's names and column order:
//! `frame_slice` (graphics frame events' buffer slices), `gpu_slice`
//! (render stages, Vulkan API events and GPU log lines),
//! `expected_frame_timeline_slice` and `actual_frame_timeline_slice`
//! (SurfaceFlinger's frame timeline, one row per slice of the process
//! tracks of those kinds: the tracks' ids are also given to the slice
//! table as an `IN` list, so that SQLite reads those tracks' slices and
//! not every slice with a track lookup each); and over the GPU tables,
//! `gpu` (the GPUs with an index, `ugpu` their row) and
//! `gpu_counter_group`. Created before the prelude's empty views, so
//! these take the names.

/// The statements that create the views.
pub const VIEWS: &str = r#"
CREATE VIEW gpu AS
  SELECT id, id AS ugpu, gpu, name, vendor, model, architecture, uuid, pci_bdf,
    machine_id, arg_set_id
  FROM __intrinsic_gpu
  WHERE gpu IS NOT NULL;
CREATE VIEW gpu_counter_group AS
  SELECT id, group_id, track_id, name, description FROM __intrinsic_gpu_counter_group;
CREATE VIEW frame_slice AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
    s.arg_set_id,
    extract_arg(s.arg_set_id, 'layer_name') AS layer_name,
    extract_arg(s.arg_set_id, 'frame_number') AS frame_number,
    extract_arg(s.arg_set_id, 'queue_to_acquire_time') AS queue_to_acquire_time,
    extract_arg(s.arg_set_id, 'acquire_to_latch_time') AS acquire_to_latch_time,
    extract_arg(s.arg_set_id, 'latch_to_present_time') AS latch_to_present_time
  FROM slice AS s JOIN __intrinsic_track AS t ON s.track_id = t.id
  WHERE t.type = 'graphics_frame_event';
CREATE VIEW gpu_slice AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
    s.arg_set_id,
    extract_arg(s.arg_set_id, 'context_id') AS context_id,
    extract_arg(s.arg_set_id, 'render_target') AS render_target,
    extract_arg(s.arg_set_id, 'render_target_name') AS render_target_name,
    extract_arg(s.arg_set_id, 'render_pass') AS render_pass,
    extract_arg(s.arg_set_id, 'render_pass_name') AS render_pass_name,
    extract_arg(s.arg_set_id, 'command_buffer') AS command_buffer,
    extract_arg(s.arg_set_id, 'command_buffer_name') AS command_buffer_name,
    extract_arg(s.arg_set_id, 'frame_id') AS frame_id,
    extract_arg(s.arg_set_id, 'submission_id') AS submission_id,
    extract_arg(s.arg_set_id, 'hw_queue_id') AS hw_queue_id,
    extract_arg(s.arg_set_id, 'upid') AS upid,
    extract_arg(s.arg_set_id, 'render_subpasses') AS render_subpasses,
    extract_arg(s.arg_set_id, 'render_stage_category') AS render_stage_category
  FROM slice AS s JOIN __intrinsic_track AS t ON s.track_id = t.id
  WHERE t.type IN ('gpu_render_stage', 'vulkan_events', 'gpu_log');
CREATE VIEW expected_frame_timeline_slice AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
    s.arg_set_id,
    extract_arg(s.arg_set_id, 'Display frame token') AS display_frame_token,
    extract_arg(s.arg_set_id, 'Surface frame token') AS surface_frame_token,
    t.upid,
    extract_arg(s.arg_set_id, 'Layer name') AS layer_name
  FROM slice AS s JOIN __intrinsic_track AS t ON s.track_id = t.id
  WHERE t.type = 'android_expected_frame_timeline'
    AND s.track_id IN (SELECT id FROM __intrinsic_track WHERE type = 'android_expected_frame_timeline')
  ORDER BY s.id;
CREATE VIEW actual_frame_timeline_slice AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
    s.arg_set_id,
    extract_arg(s.arg_set_id, 'Display frame token') AS display_frame_token,
    t.upid,
    extract_arg(s.arg_set_id, 'Surface frame token') AS surface_frame_token,
    extract_arg(s.arg_set_id, 'Layer name') AS layer_name,
    extract_arg(s.arg_set_id, 'Present type') AS present_type,
    extract_arg(s.arg_set_id, 'On time finish') AS on_time_finish,
    extract_arg(s.arg_set_id, 'GPU composition') AS gpu_composition,
    extract_arg(s.arg_set_id, 'Jank type') AS jank_type,
    extract_arg(s.arg_set_id, 'Jank severity type') AS jank_severity_type,
    extract_arg(s.arg_set_id, 'Prediction type') AS prediction_type,
    extract_arg(s.arg_set_id, 'Jank tag') AS jank_tag,
    extract_arg(s.arg_set_id, 'Jank tag (experimental)') AS jank_tag_experimental,
    extract_arg(s.arg_set_id, 'Jank Severity Score') AS jank_score,
    extract_arg(s.arg_set_id, 'Latched unsignaled count') AS latched_unsignaled_count,
    extract_arg(s.arg_set_id, 'Addressable unsignaled latch count')
      AS addressable_unsignaled_latch_count,
    extract_arg(s.arg_set_id, 'Latched fence state') AS latched_fence_state
  FROM slice AS s JOIN __intrinsic_track AS t ON s.track_id = t.id
  WHERE t.type = 'android_actual_frame_timeline'
    AND s.track_id IN (SELECT id FROM __intrinsic_track WHERE type = 'android_actual_frame_timeline')
  ORDER BY s.id;
"#;
