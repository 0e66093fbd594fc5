#!/usr/bin/env python3
"""Summarizes a run of `cargo bench -p zerotrace-interop --bench trace_buffer`.

Reads criterion's estimates and samples (`<criterion dir>/<group>/<variant>/new/`)
and prints, as Markdown, the GB/s of every variant (from criterion's typical
estimate and from the fastest sample) and the speed ratios of zerotrace to
Perfetto's V1 and V2 and to the memcpy floor. GB/s is 10^9 bytes per second of
the group's throughput bytes (chunk payload handed in; packet bytes read out for
the `_read` groups).

Usage: python3 tracing-core/interop/benches/trace_buffer_ratios.py [criterion dir]
(default: $CARGO_TARGET_DIR/criterion, else target/criterion)
"""

import json
import os
import sys

CASES = ["discard", "ring"]
KINDS = ["", "_ingest", "_read"]
VARIANTS = ["zerotrace", "perfetto_v1", "perfetto_v2", "floor_memcpy"]
GOAL = 1.3  # zerotrace ingest+read vs Perfetto V2


def load(root, group, variant):
    """(bytes per iteration, typical ns per iteration, fastest sample's ns per iteration)."""
    base = os.path.join(root, group, variant, "new")
    try:
        with open(os.path.join(base, "estimates.json")) as f:
            est = json.load(f)
        with open(os.path.join(base, "benchmark.json")) as f:
            bench = json.load(f)
        with open(os.path.join(base, "sample.json")) as f:
            s = json.load(f)
    except FileNotFoundError:
        return None
    typical = (est.get("slope") or est["mean"])["point_estimate"]
    fastest = min(t / n for t, n in zip(s["times"], s["iters"]))
    throughput = bench.get("throughput") or {}
    nbytes = throughput.get("Bytes") or throughput.get("BytesDecimal") or 0
    return nbytes, typical, fastest


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
    rows = {}
    print("| group | variant | GB/s (typical) | GB/s (fastest sample) | time (fastest) |")
    print("|---|---|---:|---:|---:|")
    for case in CASES:
        for kind in KINDS:
            group = case + kind
            for v in VARIANTS:
                r = load(root, group, v)
                if r is None:
                    continue
                nbytes, typical, fastest = r
                rows[(group, v)] = r
                print(f"| {group} | {v} | {nbytes / typical:.2f} | {nbytes / fastest:.2f} "
                      f"| {fastest / 1000:.0f} µs |")
    print()
    print("Speed of zerotrace relative to each (time of the other / time of ours; "
          "fastest samples, typical estimates in brackets):")
    print()
    print("| group | vs Perfetto V1 | vs Perfetto V2 | vs memcpy floor |")
    print("|---|---:|---:|---:|")
    ok = True
    for case in CASES:
        for kind in KINDS:
            group = case + kind
            ours = rows.get((group, "zerotrace"))
            if ours is None:
                continue
            cells = []
            for v in ["perfetto_v1", "perfetto_v2", "floor_memcpy"]:
                other = rows.get((group, v))
                if other is None:
                    cells.append("–")
                    continue
                # Per byte, as `_read` groups count different bytes per variant.
                fast = (other[2] / other[0]) / (ours[2] / ours[0])
                typ = (other[1] / other[0]) / (ours[1] / ours[0])
                cells.append(f"{fast:.2f}× ({typ:.2f}×)")
                if kind == "" and v == "perfetto_v2" and fast < GOAL:
                    ok = False
            print(f"| {group} | " + " | ".join(cells) + " |")
    print()
    print(f"goal (zerotrace ingest+read ≥ {GOAL}× Perfetto V2 in both cases): "
          + ("met" if ok else "NOT met"))


if __name__ == "__main__":
    main()
