-- Written for zerotrace: the `android.binder` module. A binder
-- transaction is a 'binder transaction' (or 'binder transaction async')
-- slice on the calling thread with a flow to the 'binder reply' (or
-- 'binder async rcv') slice on the serving thread; the server may name
-- the call with an AIDL::...Server/server or HIDL::...server slice. The
-- module pairs the two ends with their threads and processes, the OOM
-- scores of both processes at the time, the time each end spent in each
-- thread state and blocked kernel function, and the packages involved.
-- (Upstream's pprof graphs of the transactions, android_binder_graph and
-- the outgoing/incoming ones, are not provided: the engine has no
-- experimental_profile.)

INCLUDE PERFETTO MODULE android.process_metadata;
INCLUDE PERFETTO MODULE android.suspend;
INCLUDE PERFETTO MODULE slices.flow;

-- The binder slices of each process: every thread slice whose name starts
-- with 'binder', counted by process and slice name.
CREATE PERFETTO VIEW android_binder_metrics_by_process(
  -- The process's name.
  process_name STRING,
  -- The process's pid.
  pid LONG,
  -- The slice's name.
  slice_name STRING,
  -- How many such slices the process has.
  event_count LONG
) AS
SELECT
  p.name AS process_name,
  p.pid,
  s.name AS slice_name,
  count(*) AS event_count
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
JOIN thread AS th ON th.utid = tt.utid
JOIN process AS p ON p.upid = th.upid
WHERE s.name GLOB 'binder*'
GROUP BY process_name, slice_name;

-- Whether a slice's name is a server-side interface name
-- (`_async_binder_reply` spells the same three patterns out, one select
-- each).
CREATE PERFETTO MACRO _zt_binder_is_server_name(name Expr)
RETURNS Expr
AS (
  $name GLOB 'AIDL::*Server'
  OR $name GLOB 'AIDL::*server'
  OR $name GLOB 'HIDL::*server'
);

-- Synchronous transactions with their replies, one row per pair. A
-- transaction slice with children is left out when no flow leaves it
-- (the children then belong to a transaction whose end was lost) and kept
-- when one does (a nested transaction). Both ends must have ended, and
-- the call must last at least as long as its reply. The interface name is
-- the smallest of the reply's server-name children.
CREATE PERFETTO TABLE _binder_txn_merged AS
WITH
  txn_with_children AS (
    SELECT parent.id
    FROM slice AS child
    JOIN slice AS parent ON parent.id = child.parent_id
    WHERE parent.name = 'binder transaction'
    GROUP BY parent.id
  ),
  nested_txn AS (
    SELECT DISTINCT root_node_id AS id FROM _slice_following_flow!(txn_with_children)
  ),
  lost_txn AS (
    SELECT id FROM txn_with_children
    EXCEPT
    SELECT id FROM nested_txn
  ),
  txn AS MATERIALIZED (
    SELECT
      s.id AS binder_txn_id,
      p.name AS process_name,
      th.name AS thread_name,
      th.utid,
      th.tid,
      p.pid,
      p.upid,
      s.ts,
      s.dur,
      th.is_main_thread
    FROM slice AS s
    JOIN thread_track AS tt ON tt.id = s.track_id
    JOIN thread AS th USING (utid)
    JOIN process AS p USING (upid)
    WHERE s.name = 'binder transaction'
      AND s.id NOT IN (SELECT id FROM lost_txn)
  ),
  paired AS (
    SELECT
      txn.*,
      r.ts AS server_ts,
      r.dur AS server_dur,
      r.id AS binder_reply_id,
      rth.name AS server_thread,
      rp.name AS server_process,
      rth.utid AS server_utid,
      rth.tid AS server_tid,
      rp.pid AS server_pid,
      rp.upid AS server_upid,
      named.name AS aidl_name,
      named.ts AS aidl_ts,
      named.dur AS aidl_dur
    FROM txn
    JOIN flow AS f ON f.slice_out = txn.binder_txn_id
    JOIN slice AS r ON r.id = f.slice_in
    JOIN thread_track AS rtt ON rtt.id = r.track_id
    JOIN thread AS rth ON rth.utid = rtt.utid
    JOIN process AS rp ON rp.upid = rth.upid
    LEFT JOIN slice AS named
      ON named.parent_id = r.id
      AND _zt_binder_is_server_name!(named.name)
  )
SELECT
  min(aidl_name) AS aidl_name,
  aidl_ts,
  aidl_dur,
  binder_txn_id,
  process_name AS client_process,
  thread_name AS client_thread,
  upid AS client_upid,
  utid AS client_utid,
  tid AS client_tid,
  pid AS client_pid,
  is_main_thread,
  ts AS client_ts,
  dur AS client_dur,
  binder_reply_id,
  server_process,
  server_thread,
  server_upid,
  server_utid,
  server_tid,
  server_pid,
  server_ts,
  server_dur
FROM paired
WHERE client_dur != -1 AND server_dur != -1 AND client_dur >= server_dur
GROUP BY process_name, thread_name, binder_txn_id, binder_reply_id;

-- Each process's OOM adjustment score from each of its samples until the
-- next (the last until the trace's end).
CREATE PERFETTO TABLE _oom_score AS
SELECT
  p.upid,
  cast_int!(c.value) AS value,
  c.ts,
  coalesce(lead(c.ts) OVER (PARTITION BY p.upid ORDER BY c.ts), trace_end()) AS end_ts
FROM counter AS c
JOIN process_counter_track AS t ON t.id = c.track_id
JOIN process AS p USING (upid)
WHERE t.name = 'oom_score_adj';

CREATE PERFETTO INDEX _oom_score_idx ON _oom_score(upid, ts);

-- Synchronous transactions with both processes' OOM scores when each end
-- began.
CREATE PERFETTO VIEW _sync_binder_metrics_by_txn AS
SELECT
  b.*,
  cs.value AS client_oom_score,
  ss.value AS server_oom_score
FROM _binder_txn_merged AS b
LEFT JOIN _oom_score AS cs
  ON cs.upid = b.client_upid AND b.client_ts BETWEEN cs.ts AND cs.end_ts
LEFT JOIN _oom_score AS ss
  ON ss.upid = b.server_upid AND b.server_ts BETWEEN ss.ts AND ss.end_ts;

-- The client end as an interval of its thread.
CREATE PERFETTO VIEW _binder_txn AS
SELECT client_ts AS ts, client_dur AS dur, client_utid AS utid, *
FROM _sync_binder_metrics_by_txn;

-- The server end as an interval of its thread.
CREATE PERFETTO VIEW _binder_reply AS
SELECT server_ts AS ts, server_dur AS dur, server_utid AS utid, *
FROM _sync_binder_metrics_by_txn;

CREATE VIRTUAL TABLE _sp_binder_txn_thread_state
USING SPAN_JOIN(_binder_txn PARTITIONED utid, thread_state PARTITIONED utid);

CREATE VIRTUAL TABLE _sp_binder_reply_thread_state
USING SPAN_JOIN(_binder_reply PARTITIONED utid, thread_state PARTITIONED utid);

-- The time each end of a synchronous transaction spent in each thread
-- state: 'binder_txn' rows are the client's, 'binder_reply' rows the
-- server's.
CREATE PERFETTO VIEW android_sync_binder_thread_state_by_txn(
  -- The transaction's slice id.
  binder_txn_id LONG,
  -- When the client's end began.
  client_ts TIMESTAMP,
  -- The client thread's tid.
  client_tid LONG,
  -- The reply's slice id.
  binder_reply_id LONG,
  -- When the server's end began.
  server_ts TIMESTAMP,
  -- The server thread's tid.
  server_tid LONG,
  -- Which end: 'binder_txn' (client) or 'binder_reply' (server).
  thread_state_type STRING,
  -- The thread state.
  thread_state STRING,
  -- The time in it during the transaction.
  thread_state_dur DURATION,
  -- How many intervals of it.
  thread_state_count LONG
) AS
SELECT
  binder_txn_id, client_ts, client_tid, binder_reply_id, server_ts, server_tid,
  'binder_txn' AS thread_state_type,
  state AS thread_state,
  sum(dur) AS thread_state_dur,
  count(dur) AS thread_state_count
FROM _sp_binder_txn_thread_state
GROUP BY binder_txn_id, binder_reply_id, thread_state_type, thread_state
UNION ALL
SELECT
  binder_txn_id, client_ts, client_tid, binder_reply_id, server_ts, server_tid,
  'binder_reply' AS thread_state_type,
  state AS thread_state,
  sum(dur) AS thread_state_dur,
  count(dur) AS thread_state_count
FROM _sp_binder_reply_thread_state
GROUP BY binder_txn_id, binder_reply_id, thread_state_type, thread_state;

-- The time each end of a synchronous transaction spent blocked in each
-- kernel function, by end as in android_sync_binder_thread_state_by_txn.
CREATE PERFETTO VIEW android_sync_binder_blocked_functions_by_txn(
  -- The transaction's slice id.
  binder_txn_id LONG,
  -- When the client's end began.
  client_ts TIMESTAMP,
  -- The client thread's tid.
  client_tid LONG,
  -- The reply's slice id.
  binder_reply_id LONG,
  -- When the server's end began.
  server_ts TIMESTAMP,
  -- The server thread's tid.
  server_tid LONG,
  -- Which end: 'binder_txn' (client) or 'binder_reply' (server).
  thread_state_type STRING,
  -- The kernel function the thread was blocked in.
  blocked_function STRING,
  -- The time blocked in it during the transaction.
  blocked_function_dur DURATION,
  -- How many intervals blocked in it.
  blocked_function_count LONG
) AS
SELECT
  binder_txn_id, client_ts, client_tid, binder_reply_id, server_ts, server_tid,
  'binder_txn' AS thread_state_type,
  blocked_function,
  sum(dur) AS blocked_function_dur,
  count(dur) AS blocked_function_count
FROM _sp_binder_txn_thread_state
WHERE blocked_function IS NOT NULL
GROUP BY binder_txn_id, binder_reply_id, blocked_function
UNION ALL
SELECT
  binder_txn_id, client_ts, client_tid, binder_reply_id, server_ts, server_tid,
  'binder_reply' AS thread_state_type,
  blocked_function,
  sum(dur) AS blocked_function_dur,
  count(dur) AS blocked_function_count
FROM _sp_binder_reply_thread_state
WHERE blocked_function IS NOT NULL
GROUP BY binder_txn_id, binder_reply_id, blocked_function;

-- The server-side slices of one-way transactions ('binder async rcv')
-- and the interface names, each with the next such slice of its track.
CREATE PERFETTO TABLE _async_binder_reply AS
WITH
  -- One select per name pattern (the patterns match disjoint names), so
  -- that each is one search of the slice names rather than all of them
  -- tested on every slice.
  received AS MATERIALIZED (
    SELECT id, ts, dur, track_id, name FROM slice WHERE name GLOB 'AIDL::*Server'
    UNION ALL
    SELECT id, ts, dur, track_id, name FROM slice WHERE name GLOB 'AIDL::*server'
    UNION ALL
    SELECT id, ts, dur, track_id, name FROM slice WHERE name GLOB 'HIDL::*server'
    UNION ALL
    SELECT id, ts, dur, track_id, name FROM slice WHERE name = 'binder async rcv'
  )
SELECT
  *,
  lead(name) OVER (PARTITION BY track_id ORDER BY ts) AS next_name,
  lead(ts) OVER (PARTITION BY track_id ORDER BY ts) AS next_ts,
  lead(dur) OVER (PARTITION BY track_id ORDER BY ts) AS next_dur
FROM received
ORDER BY id;

-- The client ends of one-way transactions with their threads.
CREATE PERFETTO TABLE _binder_async_txn_raw AS
SELECT
  s.id AS binder_txn_id,
  p.name AS client_process,
  th.name AS client_thread,
  p.upid AS client_upid,
  th.utid AS client_utid,
  th.tid AS client_tid,
  p.pid AS client_pid,
  th.is_main_thread,
  s.ts AS client_ts,
  s.dur AS client_dur
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
JOIN thread AS th USING (utid)
JOIN process AS p USING (upid)
WHERE s.name = 'binder transaction async'
ORDER BY binder_txn_id;

-- One-way transactions with their receiving ends; the interface name is
-- the slice that follows the receipt on its track, unless that is another
-- receipt.
CREATE PERFETTO TABLE _binder_async_txn AS
SELECT
  iif(r.next_name = 'binder async rcv', NULL, r.next_name) AS aidl_name,
  iif(r.next_name = 'binder async rcv', NULL, r.next_ts) AS aidl_ts,
  iif(r.next_name = 'binder async rcv', NULL, r.next_dur) AS aidl_dur,
  txn.*,
  r.id AS binder_reply_id,
  rp.name AS server_process,
  rth.name AS server_thread,
  rp.upid AS server_upid,
  rth.utid AS server_utid,
  rth.tid AS server_tid,
  rp.pid AS server_pid,
  r.ts AS server_ts,
  r.dur AS server_dur
FROM _binder_async_txn_raw AS txn
JOIN flow AS f ON f.slice_out = txn.binder_txn_id
JOIN _async_binder_reply AS r ON r.id = f.slice_in
JOIN thread_track AS rtt ON rtt.id = r.track_id
JOIN thread AS rth ON rth.utid = rtt.utid
JOIN process AS rp ON rp.upid = rth.upid
WHERE r.name = 'binder async rcv'
ORDER BY binder_txn_id;

-- One-way transactions with both processes' OOM scores.
CREATE PERFETTO VIEW _async_binder_metrics_by_txn AS
SELECT
  b.*,
  cs.value AS client_oom_score,
  ss.value AS server_oom_score
FROM _binder_async_txn AS b
LEFT JOIN _oom_score AS cs
  ON cs.upid = b.client_upid AND b.client_ts BETWEEN cs.ts AND cs.end_ts
LEFT JOIN _oom_score AS ss
  ON ss.upid = b.server_upid AND b.server_ts BETWEEN ss.ts AND ss.end_ts;

-- Every binder transaction, synchronous or one-way, with both ends.
CREATE PERFETTO TABLE android_binder_txns(
  -- The endpoint's full name, when the server gave one.
  aidl_name STRING,
  -- Its interface (the name's second '::' part).
  interface STRING,
  -- Its method (the name's third '::' part).
  method_name STRING,
  -- When the endpoint's name slice began (for one-way ones, the slice
  -- after the receipt).
  aidl_ts TIMESTAMP,
  -- How long the name slice lasted.
  aidl_dur DURATION,
  -- The transaction's slice id.
  binder_txn_id JOINID(slice.id),
  -- The client process's name.
  client_process STRING,
  -- The client thread's name.
  client_thread STRING,
  -- The client process.
  client_upid JOINID(process.id),
  -- The client thread.
  client_utid JOINID(thread.id),
  -- The client thread's tid.
  client_tid LONG,
  -- The client process's pid.
  client_pid LONG,
  -- Whether the client thread is its process's main thread.
  is_main_thread BOOL,
  -- When the client's end began.
  client_ts TIMESTAMP,
  -- How long the client's end lasted.
  client_dur DURATION,
  -- The reply's slice id.
  binder_reply_id JOINID(slice.id),
  -- The server process's name.
  server_process STRING,
  -- The server thread's name.
  server_thread STRING,
  -- The server process.
  server_upid JOINID(process.id),
  -- The server thread.
  server_utid JOINID(thread.id),
  -- The server thread's tid.
  server_tid LONG,
  -- The server process's pid.
  server_pid LONG,
  -- When the server's end began.
  server_ts TIMESTAMP,
  -- How long the server's end lasted.
  server_dur DURATION,
  -- The client process's OOM score when the call began.
  client_oom_score LONG,
  -- The server process's OOM score when the reply began.
  server_oom_score LONG,
  -- 1 for a synchronous transaction, 0 for a one-way one.
  is_sync BOOL,
  -- The client's duration less the time the device was suspended.
  client_monotonic_dur DURATION,
  -- The server's duration less the time the device was suspended.
  server_monotonic_dur DURATION,
  -- The client package's version code.
  client_package_version_code LONG,
  -- The server package's version code.
  server_package_version_code LONG,
  -- Whether the client package is debuggable.
  is_client_package_debuggable BOOL,
  -- Whether the server package is debuggable.
  is_server_package_debuggable BOOL
) AS
WITH
  both_kinds AS (
    SELECT *, 1 AS is_sync FROM _sync_binder_metrics_by_txn
    UNION ALL
    SELECT *, 0 AS is_sync FROM _async_binder_metrics_by_txn
  )
SELECT
  str_split(aidl_name, '::', 2) AS interface,
  str_split(aidl_name, '::', 3) AS method_name,
  both_kinds.*,
  _extract_duration_without_suspend(client_ts, client_dur) AS client_monotonic_dur,
  _extract_duration_without_suspend(server_ts, server_dur) AS server_monotonic_dur,
  cm.version_code AS client_package_version_code,
  sm.version_code AS server_package_version_code,
  cm.debuggable AS is_client_package_debuggable,
  sm.debuggable AS is_server_package_debuggable
FROM both_kinds
LEFT JOIN android_process_metadata AS cm ON cm.upid = both_kinds.client_upid
LEFT JOIN android_process_metadata AS sm ON sm.upid = both_kinds.server_upid
ORDER BY binder_txn_id;
