#!/usr/bin/env python3
"""Summarizes a run of `cargo bench -p zerotrace-encode-bench --bench encode` as Markdown.

Reads criterion's estimates (`<criterion dir>/<group>/<variant>/new/estimates.json`)
and samples (`sample.json`) and prints the times of every variant plus the goal
ratios of issue #2, both from criterion's typical estimate and from the fastest
sample of each variant. On a shared machine other tenants only ever add time, so
the fastest samples are the steadier comparison.

Usage: python3 protos/encode-bench/benches/ratios.py [criterion dir]
(default: $CARGO_TARGET_DIR/criterion, else target/criterion)
"""

import json
import os
import sys

GROUPS = ["slice_begin", "nested_1000", "bytes_64k"]

# (label, numerator, denominator, goal as text, predicate on the ratio)
GOALS = [
    ("slice_begin (a)/(b)", "slice_begin/a_protozero_slice", "slice_begin/b_reference", "<= 1.3", lambda r: r <= 1.3),
    ("slice_begin (a, no compaction)/(b)", "slice_begin/a_protozero_slice_nocompact", "slice_begin/b_reference", "(info)", None),
    ("slice_begin (a, heap)/(b)", "slice_begin/a_protozero_heap", "slice_begin/b_reference", "(info)", None),
    ("slice_begin generated/(a) [issue 3]", "slice_begin/a_generated_slice", "slice_begin/a_protozero_slice", "<= 1.1", lambda r: r <= 1.1),
    ("slice_begin (c)/(a)", "slice_begin/c_prost_prebuilt", "slice_begin/a_protozero_slice", ">= 3", lambda r: r >= 3),
    ("slice_begin (d)/(a)", "slice_begin/d_prost_build", "slice_begin/a_protozero_slice", "(info)", None),
    ("nested_1000 (a)/(b)", "nested_1000/a_protozero_slice", "nested_1000/b_reference", "<= 1.3", lambda r: r <= 1.3),
    ("nested_1000 (a, no compaction)/(b)", "nested_1000/a_protozero_slice_nocompact", "nested_1000/b_reference", "(info)", None),
    ("nested_1000 (c)/(a)", "nested_1000/c_prost_prebuilt", "nested_1000/a_protozero_slice", ">= 3", lambda r: r >= 3),
    ("bytes_64k contiguous/memcpy", "bytes_64k/a_protozero_contiguous", "bytes_64k/e_memcpy", "<= 1.1", lambda r: r <= 1.1),
    ("bytes_64k 4 KiB slices/memcpy", "bytes_64k/a_protozero_4k_slices", "bytes_64k/e_memcpy", "<= 1.5", lambda r: r <= 1.5),
]


def load(root):
    """Maps "group/variant" to (typical ns per iteration, fastest sample's ns per
    iteration); typical is criterion's slope, else its mean."""
    times = {}
    for group in GROUPS:
        gdir = os.path.join(root, group)
        if not os.path.isdir(gdir):
            continue
        for variant in sorted(os.listdir(gdir)):
            path = os.path.join(gdir, variant, "new", "estimates.json")
            if not os.path.isfile(path):
                continue
            with open(path) as f:
                est = json.load(f)
            typical = (est.get("slope") or est["mean"])["point_estimate"]
            fastest = typical
            samples = os.path.join(gdir, variant, "new", "sample.json")
            if os.path.isfile(samples):
                with open(samples) as f:
                    s = json.load(f)
                fastest = min(t / n for t, n in zip(s["times"], s["iters"]))
            times[f"{group}/{variant}"] = (typical, fastest)
    return times


def fmt(ns):
    if ns >= 1000:
        return f"{ns / 1000:.3f} µs"
    return f"{ns:.2f} ns"


def main():
    default = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
    root = sys.argv[1] if len(sys.argv) > 1 else default
    times = load(root)
    if not times:
        sys.exit(f"no criterion results under {root}")
    print("| scenario | variant | typical | fastest sample |")
    print("|---|---|---:|---:|")
    for key, (typical, fastest) in times.items():
        group, variant = key.split("/")
        print(f"| {group} | {variant} | {fmt(typical)} | {fmt(fastest)} |")
    print()
    print("| ratio | typical | fastest samples | goal | met (both) |")
    print("|---|---:|---:|---|---|")
    for label, num, den, goal, ok in GOALS:
        if num not in times or den not in times:
            continue
        r = times[num][0] / times[den][0]
        f = times[num][1] / times[den][1]
        met = "" if ok is None else ("yes" if ok(r) and ok(f) else "no")
        print(f"| {label} | {r:.2f} | {f:.2f} | {goal} | {met} |")


if __name__ == "__main__":
    main()
