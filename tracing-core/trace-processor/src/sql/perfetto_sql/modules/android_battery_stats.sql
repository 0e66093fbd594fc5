-- Written for zerotrace: the `android.battery_stats` module, over the
-- `battery_stats.*` tracks Android's battery history fills (counters of
-- device states and `+name=...`/`-name=...` event slices). It provides
-- `android_battery_stats_counter_to_string(track, value)` (a state's name
-- as batterystats prints it; `unknown` for a value the state does not
-- have, the number itself for a track with no names),
-- `android_battery_stats_state` (each state held to the next change) and
-- `android_battery_stats_event_slices` (each event from its `+` to its
-- `-` marker; an event whose first marker ends it began before the trace).

-- Which value names a track's states take.
CREATE PERFETTO TABLE _zt_bstats_track_kind AS
SELECT column1 AS track, column2 AS kind
FROM (
  VALUES
    ('battery_stats.wifi_scan', 'activity'),
    ('battery_stats.wifi_radio', 'activity'),
    ('battery_stats.mobile_radio', 'activity'),
    ('battery_stats.audio', 'activity'),
    ('battery_stats.video', 'activity'),
    ('battery_stats.camera', 'activity'),
    ('battery_stats.power_save', 'activity'),
    ('battery_stats.phone_in_call', 'activity'),
    ('battery_stats.wifi', 'onoff'),
    ('battery_stats.phone_state', 'phone'),
    ('battery_stats.phone_signal_strength', 'strength'),
    ('battery_stats.wifi_signal_strength', 'strength'),
    ('battery_stats.wifi_suppl', 'suppl'),
    ('battery_stats.data_conn', 'conn')
);

-- The name of each value of a kind.
CREATE PERFETTO TABLE _zt_bstats_value_name AS
SELECT column1 AS kind, column2 AS value, column3 AS name
FROM (
  VALUES
    ('activity', 0, 'inactive'),
    ('activity', 1, 'active'),
    ('onoff', 0, 'off'),
    ('onoff', 1, 'on'),
    ('phone', 0, 'in'),
    ('phone', 1, 'out'),
    ('phone', 2, 'emergency'),
    ('phone', 3, 'off'),
    ('strength', 0, '0/4'),
    ('strength', 1, '1/4'),
    ('strength', 2, '2/4'),
    ('strength', 3, '3/4'),
    ('strength', 4, '4/4'),
    ('suppl', 0, 'invalid'),
    ('suppl', 1, 'disconnected'),
    ('suppl', 2, 'disabled'),
    ('suppl', 3, 'inactive'),
    ('suppl', 4, 'scanning'),
    ('suppl', 5, 'authenticating'),
    ('suppl', 6, 'associating'),
    ('suppl', 7, 'associated'),
    ('suppl', 8, '4-way-handshake'),
    ('suppl', 9, 'group-handshake'),
    ('suppl', 10, 'completed'),
    ('suppl', 11, 'dormant'),
    ('suppl', 12, 'uninitialized'),
    ('conn', 0, 'Out of service'),
    ('conn', 1, '2.5G (GPRS)'),
    ('conn', 2, '2.7G (EDGE)'),
    ('conn', 3, '3G (UMTS)'),
    ('conn', 4, '3G (CDMA)'),
    ('conn', 5, '3G (EVDO Rel 0)'),
    ('conn', 6, '3G (EVDO Rev A)'),
    ('conn', 7, '3G (LXRTT)'),
    ('conn', 8, '3.5G (HSDPA)'),
    ('conn', 9, '3.5G (HSUPA)'),
    ('conn', 10, '3.5G (HSPA)'),
    ('conn', 11, '2G (IDEN)'),
    ('conn', 12, '3G (EVDO Rev B)'),
    ('conn', 13, '4G (LTE)'),
    ('conn', 14, '3.5G (eHRPD)'),
    ('conn', 15, '3.7G (HSPA+)'),
    ('conn', 16, '2G (GSM)'),
    ('conn', 17, '3G (TD SCDMA)'),
    ('conn', 18, 'Wifi calling (IWLAN)'),
    ('conn', 19, '4.5G (LTE CA)'),
    ('conn', 20, '5G (NR)'),
    ('conn', 21, 'Emergency calls only'),
    ('conn', 22, 'Other')
);

CREATE PERFETTO FUNCTION android_battery_stats_counter_to_string(track STRING, value DOUBLE)
RETURNS STRING AS
SELECT
  CASE
    WHEN k.kind IS NULL THEN cast_string!($value)
    ELSE coalesce(
      (SELECT n.name FROM _zt_bstats_value_name AS n WHERE n.kind = k.kind AND n.value = $value),
      'unknown'
    )
  END
FROM (SELECT (SELECT kind FROM _zt_bstats_track_kind WHERE track = $track) AS kind) AS k;

CREATE PERFETTO VIEW android_battery_stats_state(
  ts TIMESTAMP,
  dur DURATION,
  safe_dur DURATION,
  track_name STRING,
  value LONG,
  value_name STRING
) AS
SELECT
  c.ts,
  coalesce(lead(c.ts) OVER (PARTITION BY t.name ORDER BY c.ts) - c.ts, -1) AS dur,
  lead(c.ts, 1, trace_end()) OVER (PARTITION BY t.name ORDER BY c.ts) - c.ts AS safe_dur,
  t.name AS track_name,
  cast_int!(c.value) AS value,
  android_battery_stats_counter_to_string(t.name, c.value) AS value_name
FROM counter AS c
JOIN counter_track AS t ON t.id = c.track_id
WHERE t.name GLOB 'battery_stats.*';

CREATE PERFETTO VIEW android_battery_stats_event_slices(
  ts TIMESTAMP,
  dur DURATION,
  safe_dur DURATION,
  track_name STRING,
  str_value STRING,
  int_value LONG
) AS
WITH
  markers AS (
    SELECT
      s.ts,
      t.name AS track_name,
      str_split(s.name, '=', 1) AS key,
      substr(s.name, 1, 1) = '+' AS opens
    FROM slice AS s
    JOIN track AS t ON t.id = s.track_id
    WHERE t.name GLOB 'battery_stats.*' AND substr(s.name, 1, 1) IN ('+', '-')
  ),
  ordered AS (
    SELECT
      *,
      lag(ts) OVER (PARTITION BY track_name, key ORDER BY ts) AS prev_ts,
      lead(ts) OVER (PARTITION BY track_name, key ORDER BY ts) AS next_ts
    FROM markers
  ),
  spans AS (
    SELECT
      track_name,
      key,
      CASE WHEN opens THEN ts ELSE trace_start() END AS ts,
      CASE WHEN opens THEN next_ts ELSE ts END AS end_ts
    FROM ordered
    WHERE opens OR prev_ts IS NULL
  )
SELECT
  ts,
  coalesce(end_ts - ts, -1) AS dur,
  coalesce(end_ts, trace_end()) - ts AS safe_dur,
  track_name,
  str_split(key, '"', 1) AS str_value,
  cast_int!(str_split(key, ':', 0)) AS int_value
FROM spans;
