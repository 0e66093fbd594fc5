#!/usr/bin/env python3
"""Summarizes a run of `cargo bench -p zerotrace-decode-bench --bench decode`
as Markdown.

Reads criterion's results of the groups `full/<dataset>` and `lazy/<dataset>`
(`<criterion dir>/<group>/<function>/new/{benchmark,estimates,sample}.json`)
and prints one table per group: each library's time per pass over the data
set, its throughput in MB/s (10^6 bytes of packets per second) and the ratio
of its time to the floor's, both from criterion's typical estimate (the
slope, else the mean) and from the fastest sample. On a shared machine other
tenants only ever add time, so the fastest samples are the steadier
comparison.

Usage: python3 protos/decode-bench/benches/decode_ratios.py [criterion dir]
(default: $CARGO_TARGET_DIR/criterion, else target/criterion)
"""

import json
import os
import sys

TASKS = ["full", "lazy"]
DATASETS = ["recorded", "genuine", "synthetic"]
LIBRARIES = ["floor", "ours", "ours_fields", "prost", "quick_protobuf", "rust_protobuf"]


def load(root):
    """Maps (group, function) to (typical ns, fastest sample's ns, bytes) for
    every result of this bench under `root`."""
    results = {}
    for dirpath, _, filenames in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in filenames:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        group, function = bench.get("group_id"), bench.get("function_id")
        if group is None or function is None:
            continue
        task, _, dataset = group.partition("/")
        if task not in TASKS or dataset not in DATASETS:
            continue
        with open(os.path.join(dirpath, "estimates.json")) as f:
            est = json.load(f)
        typical = (est.get("slope") or est["mean"])["point_estimate"]
        fastest = typical
        samples = os.path.join(dirpath, "sample.json")
        if os.path.isfile(samples):
            with open(samples) as f:
                s = json.load(f)
            fastest = min(t / n for t, n in zip(s["times"], s["iters"]))
        throughput = bench.get("throughput") or {}
        size = throughput.get("Bytes") or throughput.get("BytesDecimal") or 0
        results[(group, function)] = (typical, fastest, size)
    return results


def fmt_time(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def mbps(size, ns):
    return size / ns * 1e3 if ns > 0 else 0.0


def main():
    default = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
    root = sys.argv[1] if len(sys.argv) > 1 else default
    results = load(root)
    if not results:
        sys.exit(f"no results of the decode bench under {root}")
    for task in TASKS:
        for dataset in DATASETS:
            group = f"{task}/{dataset}"
            rows = [(lib, results.get((group, lib))) for lib in LIBRARIES]
            if all(r is None for _, r in rows):
                continue
            floor = results.get((group, "floor"))
            size = next(r[2] for _, r in rows if r is not None)
            print(f"### {group} ({size / 1e6:.2f} MB of packets)")
            print()
            print("| library | time (typical) | MB/s (typical) | × floor (typical) "
                  "| time (fastest) | MB/s (fastest) | × floor (fastest) |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for lib, r in rows:
                if r is None:
                    continue
                typical, fastest, size = r
                if floor is not None:
                    rt = f"{typical / floor[0]:.2f}"
                    rf = f"{fastest / floor[1]:.2f}"
                else:
                    rt = rf = "–"
                print(f"| {lib} | {fmt_time(typical)} | {mbps(size, typical):.0f} | {rt} "
                      f"| {fmt_time(fastest)} | {mbps(size, fastest):.0f} | {rf} |")
            print()


if __name__ == "__main__":
    main()
