-- Written for zerotrace: the `android.binder_breakdown` module, why each
-- binder transaction (android.binder) took its time, on the client's and
-- on the server's side: the transaction's or reply's slice is flattened
-- into its deepest descendant at each time, which is intersected with the
-- thread's states, and each stretch gets a reason: memory reclaim, lock
-- or monitor contention, a nested binder call, mutex contention, IO, or
-- else the thread state.

INCLUDE PERFETTO MODULE android.binder;
INCLUDE PERFETTO MODULE intervals.overlap;
INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE slices.with_context;

-- The client ends of the transactions that lasted, by start.
CREATE PERFETTO VIEW _binder_client_view AS
SELECT binder_txn_id AS id, client_upid AS upid, client_ts AS ts, client_dur AS dur
FROM android_binder_txns
WHERE client_dur > 0
ORDER BY ts;

-- The server ends of the transactions that lasted, by start.
CREATE PERFETTO VIEW _binder_server_view AS
SELECT binder_txn_id AS id, server_upid AS upid, server_ts AS ts, server_dur AS dur
FROM android_binder_txns
WHERE server_dur > 0
ORDER BY ts;

-- The thread states that lasted, by start.
CREATE PERFETTO VIEW _thread_state_view AS
SELECT id, ts, dur, utid, cpu, state, io_wait
FROM thread_state
WHERE dur > 0
ORDER BY ts;

-- One end of every transaction (its slice id column `id`, its `ts` and
-- `dur` columns, the slice's name `slice_name`) flattened into the
-- deepest descendant slice at each time: columns id (a row number),
-- binder_txn_id, binder_reply_id, flat_id (the slice), ts, dur, name and
-- utid.
CREATE PERFETTO MACRO _binder_flatten_descendants(
  id ColumnName,
  ts ColumnName,
  dur ColumnName,
  slice_name ColumnName
)
RETURNS TableOrSubQuery
AS (
  WITH
    ends AS (SELECT $id AS id, $ts AS ts, $dur AS dur FROM android_binder_txns),
    below AS (
      SELECT s.id AS root_id, d.*
      FROM slice AS s, descendant_slice(s.id) AS d
      WHERE s.name = $slice_name
    ),
    flat AS (
      SELECT root_id, id, ts, dur
      FROM _intervals_flatten!(_intervals_merge_root_and_children!(ends, below))
    )
  SELECT
    row_number() OVER () AS id,
    txn.binder_txn_id,
    txn.binder_reply_id,
    flat.id AS flat_id,
    flat.ts,
    flat.dur,
    ts_slice.name,
    ts_slice.utid
  FROM flat
  JOIN thread_slice AS ts_slice USING (id)
  JOIN android_binder_txns AS txn ON txn.$id = flat.root_id
  WHERE flat.dur > 0
);

-- The server ends flattened.
CREATE PERFETTO TABLE _binder_server_flat_descendants AS
SELECT *
FROM _binder_flatten_descendants!(binder_reply_id, server_ts, server_dur, 'binder reply')
ORDER BY id;

-- The client ends flattened.
CREATE PERFETTO TABLE _binder_client_flat_descendants AS
SELECT *
FROM _binder_flatten_descendants!(binder_txn_id, client_ts, client_dur, 'binder transaction')
ORDER BY id;

-- The server ends' stretches with the serving thread's state.
CREATE PERFETTO TABLE _binder_server_flat_descendants_with_thread_state AS
SELECT
  ii.ts,
  ii.dur,
  f.binder_txn_id,
  f.binder_reply_id,
  f.name,
  f.flat_id,
  st.state,
  st.io_wait
FROM _interval_intersect!((_binder_server_flat_descendants, _thread_state_view), (utid)) AS ii
JOIN _binder_server_flat_descendants AS f ON f.id = ii.id_0
JOIN thread_state AS st ON st.id = ii.id_1;

-- The client ends' stretches with the calling thread's state.
CREATE PERFETTO TABLE _binder_client_flat_descendants_with_thread_state AS
SELECT
  ii.ts,
  ii.dur,
  f.binder_txn_id,
  f.binder_reply_id,
  f.name,
  f.flat_id,
  st.state,
  st.io_wait
FROM _interval_intersect!((_binder_client_flat_descendants, _thread_state_view), (utid)) AS ii
JOIN _binder_client_flat_descendants AS f ON f.id = ii.id_0
JOIN _thread_state_view AS st ON st.id = ii.id_1;

-- Why a stretch of a transaction took time, from its deepest slice's
-- name and the thread's state.
CREATE PERFETTO FUNCTION _binder_reason(
  name STRING,
  state STRING,
  io_wait LONG,
  binder_txn_id LONG,
  binder_reply_id LONG,
  flat_id LONG
)
RETURNS STRING
AS
SELECT
  CASE
    WHEN $name = 'mm_vmscan_direct_reclaim' THEN 'kernel_memory_reclaim'
    WHEN $name GLOB 'GC: Wait For*' THEN 'userspace_memory_reclaim'
    WHEN $state = 'S'
      AND ($name GLOB 'monitor contention*' OR $name GLOB 'Lock contention on a monitor lock*')
      THEN 'monitor_contention'
    WHEN $state = 'S' AND $name GLOB 'Lock contention*' THEN 'art_lock_contention'
    WHEN $state = 'S'
      AND $binder_reply_id != $flat_id
      AND $binder_txn_id != $flat_id
      AND ($name = 'binder transaction' OR $name = 'binder reply')
      THEN 'binder'
    WHEN $state = 'S' AND $name = 'Contending for pthread mutex' THEN 'mutex_contention'
    WHEN $state != 'S' AND $io_wait = 1 THEN 'io'
    ELSE $state
  END;

-- Why each stretch of the server's end of a transaction took time.
CREATE PERFETTO TABLE android_binder_server_breakdown(
  -- The transaction's slice id.
  binder_txn_id JOINID(slice.id),
  -- The reply's slice id.
  binder_reply_id JOINID(slice.id),
  -- When the stretch begins.
  ts TIMESTAMP,
  -- How long it lasts.
  dur DURATION,
  -- Why.
  reason STRING
) AS
SELECT
  binder_txn_id,
  binder_reply_id,
  ts,
  dur,
  _binder_reason(name, state, io_wait, binder_txn_id, binder_reply_id, flat_id) AS reason
FROM _binder_server_flat_descendants_with_thread_state;

-- Why each stretch of the client's end of a transaction took time.
CREATE PERFETTO TABLE android_binder_client_breakdown(
  -- The transaction's slice id.
  binder_txn_id JOINID(slice.id),
  -- The reply's slice id.
  binder_reply_id JOINID(slice.id),
  -- When the stretch begins.
  ts TIMESTAMP,
  -- How long it lasts.
  dur DURATION,
  -- Why.
  reason STRING
) AS
SELECT
  binder_txn_id,
  binder_reply_id,
  ts,
  dur,
  _binder_reason(name, state, io_wait, binder_txn_id, binder_reply_id, flat_id) AS reason
FROM _binder_client_flat_descendants_with_thread_state;

-- The client's reasons under their name for the span join below.
CREATE PERFETTO VIEW _binder_client_breakdown_view AS
SELECT binder_txn_id, binder_reply_id, ts, dur, reason AS client_reason
FROM android_binder_client_breakdown;

-- The server's reasons under their name for the span join below.
CREATE PERFETTO VIEW _binder_server_breakdown_view AS
SELECT binder_txn_id, ts, dur, reason AS server_reason
FROM android_binder_server_breakdown;

CREATE VIRTUAL TABLE _binder_client_server_breakdown_sp USING SPAN_LEFT_JOIN(
  _binder_client_breakdown_view PARTITIONED binder_txn_id,
  _binder_server_breakdown_view PARTITIONED binder_txn_id);

-- Why each stretch of a transaction took time, on the client's side with
-- the server's reason where the server was working on it: the reason is
-- the server's when there is one, else the client's.
CREATE PERFETTO TABLE android_binder_client_server_breakdown(
  -- The transaction's slice id.
  binder_txn_id JOINID(slice.id),
  -- The reply's slice id.
  binder_reply_id JOINID(slice.id),
  -- When the stretch begins.
  ts TIMESTAMP,
  -- How long it lasts.
  dur DURATION,
  -- The server's reason.
  server_reason STRING,
  -- The client's reason.
  client_reason STRING,
  -- The reason: the server's, else the client's.
  reason STRING,
  -- Whose reason: 'server' or 'client'.
  reason_type STRING
) AS
SELECT
  *,
  iif(server_reason IS NOT NULL, server_reason, client_reason) AS reason,
  iif(server_reason IS NOT NULL, 'server', 'client') AS reason_type
FROM _binder_client_server_breakdown_sp;
