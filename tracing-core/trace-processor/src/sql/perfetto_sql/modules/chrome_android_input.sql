-- Written for zerotrace: the `chrome.android_input` module: the path of
-- an Android input event to Chrome, matched by the event's id (what
-- follows `id=` in each slice's name, without a closing ')').
-- `chrome_deliver_android_input_event`: the app's `deliverInputEvent…`
-- slices. `chrome_android_input`: for each motion event the input reader
-- processed (`UnwantedInteractionBlocker::notifyMotion…`), when the
-- reader, the dispatcher (`prepareDispatchCycleLocked…chrome…`) and the
-- delivery to the app began and ended, and on which threads.

INCLUDE PERFETTO MODULE slices.with_context;

-- The input id a slice name gives after `id=`, without a closing ')'.
CREATE PERFETTO FUNCTION _zt_android_input_id(name STRING)
RETURNS STRING
AS
SELECT trim(substr(substr($name, instr($name, 'id=')), 4), ')');

CREATE PERFETTO TABLE _chrome_android_motion_input_reader_step(
  ts TIMESTAMP,
  dur DURATION,
  id LONG,
  android_input_id STRING,
  utid LONG
)
AS
SELECT ts, dur, id, _zt_android_input_id(name) AS android_input_id, utid
FROM thread_slice
WHERE name GLOB 'UnwantedInteractionBlocker::notifyMotion*';

CREATE PERFETTO TABLE _chrome_android_motion_input_dispatcher_step(
  ts TIMESTAMP,
  dur DURATION,
  id LONG,
  android_input_id STRING,
  utid LONG
)
AS
SELECT ts, dur, id, _zt_android_input_id(name) AS android_input_id, utid
FROM thread_slice
WHERE name GLOB 'prepareDispatchCycleLocked*chrome*';

CREATE PERFETTO TABLE chrome_deliver_android_input_event(
  ts TIMESTAMP,
  dur DURATION,
  utid LONG,
  android_input_id STRING
)
AS
SELECT ts, dur, utid, substr(substr(name, instr(name, 'id=')), 4) AS android_input_id
FROM thread_slice
WHERE name GLOB 'deliverInputEvent*';

CREATE PERFETTO TABLE chrome_android_input(
  android_input_id STRING,
  input_reader_processing_start_ts TIMESTAMP,
  input_reader_processing_end_ts TIMESTAMP,
  input_reader_utid LONG,
  input_dispatcher_processing_start_ts TIMESTAMP,
  input_dispatcher_processing_end_ts TIMESTAMP,
  input_dispatcher_utid LONG,
  deliver_input_event_start_ts TIMESTAMP,
  deliver_input_event_end_ts TIMESTAMP,
  deliver_input_event_utid LONG
)
AS
SELECT
  r.android_input_id,
  r.ts AS input_reader_processing_start_ts,
  r.ts + r.dur AS input_reader_processing_end_ts,
  r.utid AS input_reader_utid,
  d.ts AS input_dispatcher_processing_start_ts,
  d.ts + d.dur AS input_dispatcher_processing_end_ts,
  d.utid AS input_dispatcher_utid,
  e.ts AS deliver_input_event_start_ts,
  e.ts + e.dur AS deliver_input_event_end_ts,
  e.utid AS deliver_input_event_utid
FROM _chrome_android_motion_input_reader_step AS r
LEFT JOIN _chrome_android_motion_input_dispatcher_step AS d USING (android_input_id)
LEFT JOIN chrome_deliver_android_input_event AS e USING (android_input_id);
