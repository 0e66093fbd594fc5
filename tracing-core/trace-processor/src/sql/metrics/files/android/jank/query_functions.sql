-- Written for zerotrace: the v1 metric file android/jank/query_functions.sql.
-- Helpers that relate a chosen set of CUJ slices to the CUJ frames:
--   android_jank_cuj_table_set   named groups of tables that go together
--                                (a thread's slices, its frame boundaries,
--                                its CUJ boundaries, the frames they cut)
--   android_jank_cuj_table_set_{slice,frame_boundary,cuj_boundary,frame}(set)
--                                one table name of a group
--   android_jank_cuj_slice_overlaps(ts, dur, ts2, dur2)
--                                whether two spans share some time
--   android_jank_correlate_frame_slice_impl(set, slices, prefix)
--                                runs android/jank/internal/query_frame_slice.sql
--                                so that `<prefix>_slice_in_frame` holds each
--                                slice of the `slices` table or view cut to
--                                each frame boundary it crosses, and
--                                `<prefix>_slice_in_frame_agg` their sums per
--                                frame; returns a line naming both
--   android_jank_correlate_frame_slice(set, slices)
--                                the same with the prefix `jank_query`

DROP TABLE IF EXISTS android_jank_cuj_table_set;
CREATE TABLE android_jank_cuj_table_set(
  name TEXT,
  slice_table_name TEXT,
  frame_boundary_table_name TEXT,
  cuj_boundary_table_name TEXT,
  frame_table_name TEXT);

-- The app's threads cut at the frames themselves; each single thread at
-- its own frame boundaries. SurfaceFlinger likewise with its frames.
INSERT INTO android_jank_cuj_table_set
VALUES
  ('App threads', 'android_jank_cuj_slice', 'android_jank_cuj_frame',
   'android_jank_cuj_boundary', 'android_jank_cuj_frame'),
  ('MainThread', 'android_jank_cuj_main_thread_slice',
   'android_jank_cuj_main_thread_frame_boundary',
   'android_jank_cuj_main_thread_cuj_boundary', 'android_jank_cuj_frame'),
  ('RenderThread', 'android_jank_cuj_render_thread_slice',
   'android_jank_cuj_render_thread_frame_boundary',
   'android_jank_cuj_render_thread_cuj_boundary', 'android_jank_cuj_frame'),
  ('SF threads', 'android_jank_cuj_sf_slice', 'android_jank_cuj_sf_frame',
   'android_jank_cuj_sf_boundary', 'android_jank_cuj_sf_frame'),
  ('SF MainThread', 'android_jank_cuj_sf_main_thread_slice',
   'android_jank_cuj_sf_main_thread_frame_boundary',
   'android_jank_cuj_sf_main_thread_cuj_boundary', 'android_jank_cuj_sf_frame'),
  ('SF RenderEngine', 'android_jank_cuj_sf_render_engine_slice',
   'android_jank_cuj_sf_render_engine_frame_boundary',
   'android_jank_cuj_sf_boundary', 'android_jank_cuj_sf_frame');

CREATE OR REPLACE PERFETTO FUNCTION android_jank_cuj_table_set_slice(
  table_set STRING)
RETURNS STRING AS
SELECT slice_table_name FROM android_jank_cuj_table_set WHERE name = $table_set;

CREATE OR REPLACE PERFETTO FUNCTION android_jank_cuj_table_set_frame_boundary(
  table_set STRING)
RETURNS STRING AS
SELECT frame_boundary_table_name
FROM android_jank_cuj_table_set
WHERE name = $table_set;

CREATE OR REPLACE PERFETTO FUNCTION android_jank_cuj_table_set_cuj_boundary(
  table_set STRING)
RETURNS STRING AS
SELECT cuj_boundary_table_name
FROM android_jank_cuj_table_set
WHERE name = $table_set;

CREATE OR REPLACE PERFETTO FUNCTION android_jank_cuj_table_set_frame(
  table_set STRING)
RETURNS STRING AS
SELECT frame_table_name FROM android_jank_cuj_table_set WHERE name = $table_set;

-- Two spans overlap when each starts before the other ends.
CREATE OR REPLACE PERFETTO FUNCTION android_jank_cuj_slice_overlaps(
  ts LONG, dur LONG, ts_second LONG, dur_second LONG)
RETURNS BOOL AS
SELECT $ts < $ts_second + $dur_second AND $ts_second < $ts + $dur;

CREATE OR REPLACE PERFETTO FUNCTION android_jank_correlate_frame_slice_impl(
  table_set STRING,
  relevant_slice_table_name STRING,
  table_name_prefix STRING)
RETURNS STRING AS
SELECT COALESCE(
  RUN_METRIC(
    'android/jank/internal/query_frame_slice.sql',
    'table_name_prefix', $table_name_prefix,
    'relevant_slice_table_name', $relevant_slice_table_name,
    'slice_table_name', android_jank_cuj_table_set_slice($table_set),
    'frame_boundary_table_name',
    android_jank_cuj_table_set_frame_boundary($table_set),
    'frame_table_name', android_jank_cuj_table_set_frame($table_set)),
  'Query results in `' || $table_name_prefix || '_slice_in_frame_agg` and `'
    || $table_name_prefix || '_slice_in_frame`.');

CREATE OR REPLACE PERFETTO FUNCTION android_jank_correlate_frame_slice(
  table_set STRING,
  relevant_slice_table_name STRING)
RETURNS STRING AS
SELECT android_jank_correlate_frame_slice_impl(
  $table_set, $relevant_slice_table_name, 'jank_query');
