-- Written for zerotrace: the v1 metric file android/android_jank_cuj.sql.
-- Prepares the jank-CUJ analysis of the trace: it runs
-- android/jank/android_jank_cuj_init.sql, which publishes the CUJs, their
-- frames, boundaries and slices under the metric's table names, and the
-- query helpers (android_jank_correlate_frame_slice and its _impl form)
-- that match a chosen set of slices to each CUJ frame.
-- The proto-shaped output view of upstream's metric is not built here:
-- zerotrace has no proto builder functions for v1 metric outputs.

SELECT RUN_METRIC('android/jank/android_jank_cuj_init.sql');

INCLUDE PERFETTO MODULE android.cujs.cuj_frame_counters;

-- Each CUJ's counter-based figures (frames, missed frames, worst frame).
CREATE OR REPLACE PERFETTO TABLE android_jank_cuj_counter_metrics AS
SELECT * FROM _android_jank_cuj_counter_metrics;
