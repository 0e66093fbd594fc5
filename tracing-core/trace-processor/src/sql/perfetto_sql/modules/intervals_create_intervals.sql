-- Written for zerotrace: the `intervals.create_intervals` module.
-- `_interval_create!(starts, ends)` pairs each timestamp of `starts`
-- (a table or subquery with a `ts` column) with the first timestamp of
-- `ends` strictly after it, through the native operator
-- `__intrinsic_interval_create` (src/sql/intervals/): columns ts (the
-- start) and dur (to its end). Starts with no end after them are left out.

CREATE PERFETTO MACRO _interval_create(starts_table TableOrSubquery, ends_table TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT ts, dur
  FROM __intrinsic_interval_create(
    (SELECT __intrinsic_timestamp_set_agg(s.ts) FROM $starts_table AS s),
    (SELECT __intrinsic_timestamp_set_agg(e.ts) FROM $ends_table AS e)
  )
);
