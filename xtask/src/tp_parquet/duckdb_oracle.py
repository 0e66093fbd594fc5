# `cargo xtask tp-parquet`'s reading side: DuckDB (PyPI) over the Parquet
# dataset `zerotrace export` wrote, answering the same SQL the Rust side
# asks `zerotrace sql`, printed as JSON for the Rust side to compare.
#
# argv[1]: a JSON spec {"dataset": DIR, "jobs": [{"trace": ID or null,
#   "queries": [sql, ...]}], "bench": null or {"queries": [sql, ...],
#   "tables": [name, ...], "runs": n}}.
# A job with a trace sees each table as that trace's rows (the `trace`
# column left out); a job without one sees every trace, with `trace`.
# Output: {"answers": [[{"columns": [...], "rows": [[...]]} or
#   {"error": text}, ...] per job], "bench": [seconds per query] or null}.

import decimal
import json
import math
import os
import sys
import time

import duckdb


def value(v):
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, float) and not math.isfinite(v):
        # JSON has no NaN or infinity: spelled as `zerotrace sql --format
        # json` spells them (strings), so the two sides compare.
        if math.isnan(v):
            return "NaN"
        return "Infinity" if v > 0 else "-Infinity"
    return v


def source(dataset, table):
    glob = os.path.join(dataset, table, "*", "*.parquet")
    return ("read_parquet('%s', hive_partitioning = true, "
            "hive_types = {'trace': VARCHAR})" % glob.replace("'", "''"))


def connect(dataset, trace, tables):
    """A connection whose views read the dataset's files at each query."""
    con = duckdb.connect()
    # SQLite's order for NULLs: the smallest value.
    con.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")
    for t in tables:
        if trace is None:
            body = "SELECT * FROM %s" % source(dataset, t)
        else:
            body = ("SELECT * EXCLUDE (trace) FROM %s WHERE trace = '%s'"
                    % (source(dataset, t), trace.replace("'", "''")))
        con.execute('CREATE VIEW "%s" AS %s' % (t, body))
    return con


def load(dataset, tables):
    """The whole dataset read once, hive partitions and all, into tables
    of a schema `files` (off the search path): a view over the files made
    per job lists and binds every partition of every table again, minutes
    over the hundreds of diff test traces."""
    con = duckdb.connect()
    con.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")
    con.execute("CREATE SCHEMA files")
    for t in tables:
        con.execute('CREATE TABLE files."%s" AS SELECT * FROM %s'
                    % (t, source(dataset, t)))
    return con


def select(con, trace, tables):
    """The views of one job over the loaded tables: one trace's rows
    without the `trace` column, or (no trace) every trace's."""
    for t in tables:
        if trace is None:
            body = 'SELECT * FROM files."%s"' % t
        else:
            body = ('SELECT * EXCLUDE (trace) FROM files."%s" WHERE trace = \'%s\''
                    % (t, trace.replace("'", "''")))
        con.execute('CREATE OR REPLACE VIEW main."%s" AS %s' % (t, body))


def answer(con, q):
    try:
        cur = con.execute(q)
        columns = [d[0] for d in cur.description]
        rows = [[value(v) for v in r] for r in cur.fetchall()]
        return {"columns": columns, "rows": rows}
    except Exception as e:
        return {"error": "%s: %s" % (type(e).__name__, e)}


def bench(dataset, spec):
    """Each query's best time over DuckDB tables held in memory (loaded
    from the dataset first, not timed)."""
    con = duckdb.connect()
    con.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")
    for t in spec["tables"]:
        con.execute('CREATE TABLE "%s" AS SELECT * EXCLUDE (trace) FROM %s'
                    % (t, source(dataset, t)))
    out = []
    for q in spec["queries"]:
        best = None
        for _ in range(max(1, int(spec["runs"]))):
            t0 = time.perf_counter()
            con.execute(q).fetchall()
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        out.append(best)
    return out


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    dataset = spec["dataset"]
    tables = sorted(d for d in os.listdir(dataset)
                    if os.path.isdir(os.path.join(dataset, d)))
    answers = []
    if spec["jobs"]:
        con = load(dataset, tables)
        for job in spec["jobs"]:
            select(con, job.get("trace"), tables)
            answers.append([answer(con, q) for q in job["queries"]])
        con.close()
    out = {"answers": answers, "bench": None, "fleet": None}
    if spec.get("bench"):
        out["bench"] = bench(dataset, spec["bench"])
    if spec.get("fleet"):
        # The whole dataset, read from its files each time.
        con = connect(dataset, None, tables)
        best = None
        for _ in range(max(1, int(spec["fleet"]["runs"]))):
            t0 = time.perf_counter()
            con.execute(spec["fleet"]["query"]).fetchall()
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        out["fleet"] = best
    json.dump(out, sys.stdout, allow_nan=False)


main()
