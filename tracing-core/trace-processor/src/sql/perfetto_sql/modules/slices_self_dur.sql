-- slices.self_dur, written for zerotrace: each slice's duration less the
-- durations of its direct children.
--   slice_self_dur  (id, self_dur) for every slice
-- The sums are the native operator of src/sql/slices/self_dur.rs, one
-- pass over the slices (a grouped sum joined back to every slice took
-- SQLite minutes on millions of slices), whose columns the native source
-- __intrinsic_slice_self_dur_columns builds for the table below, by id.

-- Every slice's time not spent in a child: its duration less the sum of
-- its children's.
CREATE PERFETTO TABLE slice_self_dur(
  id ID(slice.id),
  self_dur DURATION
) AS
SELECT * FROM __intrinsic_slice_self_dur_columns;
