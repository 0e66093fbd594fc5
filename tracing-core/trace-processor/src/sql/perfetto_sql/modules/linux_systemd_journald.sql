-- Written for zerotrace: the `linux.systemd_journald` module. It provides
-- `linux_systemd_journald_logs`: the log entries the systemd journal data
-- source recorded (log source `systemd_journald`), with the details the
-- importer keeps as args (uid, comm, systemd unit, hostname, transport)
-- brought out as columns. Rows are in import order, not sorted by time.

CREATE PERFETTO VIEW linux_systemd_journald_logs(
  -- The entry's row in `logs`.
  id ID,
  -- When it was written.
  ts TIMESTAMP,
  -- The thread that wrote it, when the entry named a process.
  utid JOINID(thread.id),
  -- Its syslog priority (0 emergency to 7 debug).
  prio LONG,
  -- Its SYSLOG_IDENTIFIER, if any.
  tag STRING,
  -- Its message, if any.
  msg STRING,
  -- The writer's user id, if known.
  uid LONG,
  -- The writer's command name, if known.
  comm STRING,
  -- The systemd unit the writer belongs to, if known.
  systemd_unit STRING,
  -- The machine's hostname, if known.
  hostname STRING,
  -- How the journal received it (syslog, journal, stdout, kernel, ...).
  transport STRING
) AS
SELECT
  entry.id,
  entry.ts,
  entry.utid,
  entry.prio,
  entry.tag,
  entry.msg,
  cast(extract_arg(entry.arg_set_id, 'uid') AS INT) AS uid,
  extract_arg(entry.arg_set_id, 'comm') AS comm,
  extract_arg(entry.arg_set_id, 'systemd_unit') AS systemd_unit,
  extract_arg(entry.arg_set_id, 'hostname') AS hostname,
  extract_arg(entry.arg_set_id, 'transport') AS transport
FROM logs AS entry
WHERE entry.log_source = 'systemd_journald';
