# `cargo xtask tp-python`'s client side: Google's `perfetto` package (PyPI)
# talks to our trace processor and prints what it got, as JSON on stdout,
# for the Rust side to compare with `zerotrace sql -q`.
#
# argv[1]: a JSON spec {"mode": "bin" | "addr" | "addr+trace",
#   "bin": path of zerotrace-tp, "addr": "HOST:PORT", "trace": path,
#   "queries": [sql, ...]}.
# Output: {"answers": [{"columns": [...], "rows": [{col: value}]} or
#   {"error": text}], "bad_sql_error": text, "pandas": bool}.

import base64
import json
import sys

from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig


def cell(v):
    if isinstance(v, bytes):
        return {"base64": base64.b64encode(v).decode()}
    return v


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    mode = spec["mode"]
    if mode == "bin":
        config = TraceProcessorConfig(bin_path=spec["bin"], load_timeout=60)
        tp = TraceProcessor(trace=spec["trace"], config=config)
    elif mode == "addr":
        tp = TraceProcessor(addr=spec["addr"])
    else:
        tp = TraceProcessor(trace=spec["trace"], addr=spec["addr"])
    out = {"answers": []}
    try:
        import pandas  # noqa: F401
        have_pandas = True
    except ImportError:
        have_pandas = False
    out["pandas"] = have_pandas
    out["pandas_errors"] = []
    for q in spec["queries"]:
        try:
            it = tp.query(q)
        except Exception as e:  # the Rust side reports it against the query
            out["answers"].append({"error": "%s: %s" % (type(e).__name__, e)})
            continue
        columns = list(it.column_names)
        # The frame comes from the same answer (before iterating it): a
        # query is never run twice.
        shape = None
        if have_pandas:
            df = it.as_pandas_dataframe()
            shape = (list(df.columns), len(df.index))
        rows = [{c: cell(getattr(r, c)) for c in columns} for r in it]
        out["answers"].append({"columns": columns, "rows": rows})
        if shape is not None and shape != (columns, len(rows)):
            out["pandas_errors"].append(
                "as_pandas_dataframe: %r columns, %d rows for %r"
                % (shape[0], shape[1], q))
    try:
        tp.query("SELECT nope FROM no_such_table")
        out["bad_sql_error"] = None
    except Exception as e:
        out["bad_sql_error"] = "%s: %s" % (type(e).__name__, e)
    tp.close()
    json.dump(out, sys.stdout)


main()
