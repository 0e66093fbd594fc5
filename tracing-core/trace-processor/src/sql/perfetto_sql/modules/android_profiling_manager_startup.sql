-- Written for zerotrace: the `android.profiling_manager.startup` module.
-- `android_profiling_manager_cold_startup`: the cold starts ProfilingManager
-- reports, each from `bindApplication` to the end of the first frame after
-- it (`Choreographer#doFrame <n>`: `app_startup_ttff`, checkpoint `TTFF`)
-- and to the end of the first `reportFullyDrawn…` after it
-- (`app_startup_tti`, checkpoint `TTI`).

INCLUDE PERFETTO MODULE android.profiling_manager.util;

CREATE PERFETTO TABLE android_profiling_manager_cold_startup(
  ts TIMESTAMP,
  name STRING,
  dur DURATION,
  startup_checkpoint STRING
)
AS
SELECT ts, 'app_startup_ttff' AS name, dur, 'TTFF' AS startup_checkpoint
FROM _android_generate_start_to_end_slices(
  'bindApplication', 'Choreographer#doFrame [0-9]*', TRUE
)
UNION ALL
SELECT ts, 'app_startup_tti', dur, 'TTI'
FROM _android_generate_start_to_end_slices('bindApplication', 'reportFullyDrawn*', TRUE);
