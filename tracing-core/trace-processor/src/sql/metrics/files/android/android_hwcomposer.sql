-- Written for zerotrace: the v1 metric file android/android_hwcomposer.sql,
-- its views: HWComposer's layer counts per kind (`total_layers`,
-- `dpu_layers`, `gpu_layers`, `dpu_cached_layers`, `sf_cached_layers`,
-- `rcd_layers`: ts, display_id, value), its executions
-- (`hwc_execution_spans`), the displays seen (`display_ids`), and the DPU
-- vote counters as spans (`dpu_vote_{clock,avg_bw,peak_bw,rt_bw}_span`)
-- with the processes voting (`dpu_vote_process`). The metric's proto
-- output is not built: zerotrace has no v1 metric protos.

SELECT RUN_METRIC('android/composition_layers.sql',
  'track_name', 'HWComposer: Total Layer', 'output', 'total_layers');
SELECT RUN_METRIC('android/composition_layers.sql',
  'track_name', 'HWComposer: DPU Layer', 'output', 'dpu_layers');
SELECT RUN_METRIC('android/composition_layers.sql',
  'track_name', 'HWComposer: GPU Layer', 'output', 'gpu_layers');
SELECT RUN_METRIC('android/composition_layers.sql',
  'track_name', 'HWComposer: DPU Cached Layer', 'output', 'dpu_cached_layers');
SELECT RUN_METRIC('android/composition_layers.sql',
  'track_name', 'HWComposer: SF Cached Layer', 'output', 'sf_cached_layers');
SELECT RUN_METRIC('android/composition_layers.sql',
  'track_name', 'HWComposer: RCD Layer', 'output', 'rcd_layers');
SELECT RUN_METRIC('android/composer_execution.sql',
  'output', 'hwc_execution_spans');

CREATE OR REPLACE PERFETTO VIEW display_ids AS
SELECT display_id FROM total_layers
UNION SELECT display_id FROM dpu_layers
UNION SELECT display_id FROM gpu_layers
UNION SELECT display_id FROM dpu_cached_layers
UNION SELECT display_id FROM sf_cached_layers
UNION SELECT display_id FROM rcd_layers
UNION SELECT display_id FROM hwc_execution_spans;

SELECT RUN_METRIC('android/process_counter_span_view.sql',
  'table_name', 'dpu_vote_clock', 'counter_name', 'dpu_vote_clock');
SELECT RUN_METRIC('android/process_counter_span_view.sql',
  'table_name', 'dpu_vote_avg_bw', 'counter_name', 'dpu_vote_avg_bw');
SELECT RUN_METRIC('android/process_counter_span_view.sql',
  'table_name', 'dpu_vote_peak_bw', 'counter_name', 'dpu_vote_peak_bw');
SELECT RUN_METRIC('android/process_counter_span_view.sql',
  'table_name', 'dpu_vote_rt_bw', 'counter_name', 'dpu_vote_rt_bw');

-- The processes with DPU votes (kernel threads: pid is the voting tid).
CREATE OR REPLACE PERFETTO VIEW dpu_vote_process AS
SELECT DISTINCT p.upid, p.pid
FROM process AS p
WHERE p.upid IN (
  SELECT upid FROM dpu_vote_clock_span
  UNION SELECT upid FROM dpu_vote_avg_bw_span
  UNION SELECT upid FROM dpu_vote_peak_bw_span
);
