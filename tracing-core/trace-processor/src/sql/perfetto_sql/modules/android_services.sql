-- Written for zerotrace: the `android.services` module.
-- `android_service_bindings`: each service bind, from the client's side to
-- the service's. The activity manager marks a bind with an instant
-- `requestServiceBinding… bindSeq=<n> …` right before its `binder
-- transaction async` (its next sibling among instants); the service's
-- process answers in a slice `serviceBind:… token=ServiceRecord{<token> …
-- act=<action> cmp=<component> flg=<flags> … bindSeq=<n>}`. The two are
-- matched by `bindSeq`; the client and server are the async transaction's
-- (`android.binder`), and when the request was made while serving a binder
-- call, the client is that call's client instead.

INCLUDE PERFETTO MODULE slices.with_context;
INCLUDE PERFETTO MODULE android.binder;
INCLUDE PERFETTO MODULE graphs.search;

-- Each async transaction that dispatches a bind, with its bind sequence
-- number and the dispatching thread.
CREATE PERFETTO TABLE _bind_dispatch AS
WITH
  siblings AS MATERIALIZED (
    SELECT node_id, next_node_id
    FROM graph_next_sibling!((
      SELECT id AS node_id, parent_id AS node_parent_id, ts AS sort_key
      FROM slice
      WHERE dur = 0
    ))
  )
SELECT
  nxt.id,
  nxt.ts,
  nxt.dur,
  req.utid,
  cast_int!(str_split(str_split(req.name, 'bindSeq=', 1), ' ', 0)) AS bind_seq
FROM siblings AS sb
JOIN thread_slice AS req ON req.id = sb.node_id
JOIN slice AS nxt ON nxt.id = sb.next_node_id
WHERE req.name GLOB 'requestServiceBinding*'
  AND nxt.name = 'binder transaction async';

-- Each bind a service received, with the fields of its slice's name.
CREATE PERFETTO TABLE _bind_receive AS
SELECT
  id,
  ts,
  dur,
  track_id,
  replace(str_split(str_split(name, 'token=', 1), ' ', 0), 'ServiceRecord{', '') AS token,
  str_split(str_split(name, 'act=', 1), ' ', 0) AS act,
  str_split(str_split(name, 'cmp=', 1), ' ', 0) AS cmp,
  str_split(str_split(name, 'flg=', 1), ' ', 0) AS flg,
  cast_int!(str_split(str_split(name, 'bindSeq=', 1), '}', 0)) AS bind_seq
FROM slice
WHERE name GLOB 'serviceBind:*';

CREATE PERFETTO TABLE android_service_bindings(
  client_oom_score LONG,
  client_process STRING,
  client_thread STRING,
  client_pid LONG,
  client_tid LONG,
  client_upid JOINID(process.id),
  client_utid JOINID(thread.id),
  client_ts TIMESTAMP,
  client_dur DURATION,
  server_oom_score LONG,
  server_process STRING,
  server_thread STRING,
  server_pid LONG,
  server_tid LONG,
  server_upid JOINID(process.id),
  server_utid JOINID(thread.id),
  server_ts TIMESTAMP,
  server_dur DURATION,
  token STRING,
  act STRING,
  cmp STRING,
  flg STRING,
  bind_seq LONG
)
AS
SELECT
  coalesce(outer_txn.client_oom_score, txn.client_oom_score) AS client_oom_score,
  coalesce(outer_txn.client_process, txn.client_process) AS client_process,
  coalesce(outer_txn.client_thread, txn.client_thread) AS client_thread,
  coalesce(outer_txn.client_pid, txn.client_pid) AS client_pid,
  coalesce(outer_txn.client_tid, txn.client_tid) AS client_tid,
  coalesce(outer_txn.client_upid, txn.client_upid) AS client_upid,
  coalesce(outer_txn.client_utid, txn.client_utid) AS client_utid,
  coalesce(outer_txn.client_ts, txn.client_ts) AS client_ts,
  coalesce(outer_txn.client_dur, txn.client_dur) AS client_dur,
  txn.server_oom_score,
  txn.server_process,
  txn.server_thread,
  txn.server_pid,
  txn.server_tid,
  txn.server_upid,
  txn.server_utid,
  r.ts AS server_ts,
  r.dur AS server_dur,
  r.token,
  r.act,
  r.cmp,
  r.flg,
  r.bind_seq
FROM _bind_dispatch AS d
JOIN _bind_receive AS r ON r.bind_seq = d.bind_seq
LEFT JOIN android_binder_txns AS txn ON txn.binder_txn_id = d.id
LEFT JOIN ancestor_slice(d.id) AS root ON root.depth = 0
LEFT JOIN android_binder_txns AS outer_txn
  ON outer_txn.server_ts = root.ts AND outer_txn.server_utid = d.utid;
