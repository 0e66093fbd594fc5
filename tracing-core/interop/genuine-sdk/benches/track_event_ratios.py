#!/usr/bin/env python3
"""Summarizes a run of `cargo bench -p zerotrace-genuine-sdk --bench track_event`.

Prints, as Markdown, the time per slice (begin + end) or per span of every
variant, from criterion's typical estimate and from the fastest sample, then
the ratios the issue's goals are stated in: zerotrace vs the genuine C SDK
(goal <= 0.35), vs the floor (goal <= 2), the disabled cost (goal <= 1 ns),
and the tracing layers vs a registry with no layer and one with the
Identity layer (goal for ours <= 3).

Usage: python3 tracing-core/interop/genuine-sdk/benches/track_event_ratios.py [criterion dir]
(default: $CARGO_TARGET_DIR/criterion, else target/criterion) summarizes the
last run; with `--runs N` (from the repository's root) it runs the bench N
times itself and reports, for every figure and ratio, the median over the
runs (each run measures every variant, so the runs interleave them).
"""

import json
import os
import statistics
import subprocess
import sys

GROUPS = {
    "track_event": [
        "zerotrace/no_args", "perfetto_c_sdk/no_args", "floor/no_args",
        "zerotrace/two_args", "perfetto_c_sdk/two_args", "floor/two_args",
        "zerotrace/disabled", "perfetto_c_sdk/disabled",
    ],
    "tracing_span": [
        "registry_no_layer", "registry_identity_layer", "zerotrace_layer",
        "tracing_perfetto_sdk_layer",
        "tracing_perfetto_layer",
    ],
}


def load(root, group, variant):
    """(typical ns, fastest sample's ns) per iteration, or None."""
    # criterion spells a '/' in a benchmark name as '_' in its directory.
    base = os.path.join(root, group, variant.replace("/", "_"), "new")
    try:
        with open(os.path.join(base, "estimates.json")) as f:
            est = json.load(f)
        with open(os.path.join(base, "sample.json")) as f:
            s = json.load(f)
    except FileNotFoundError:
        return None
    typical = (est.get("slope") or est["mean"])["point_estimate"]
    fastest = min(t / n for t, n in zip(s["times"], s["iters"]))
    return typical, fastest


def fmt(ns):
    return f"{ns:.2f} ns" if ns < 10 else f"{ns:.0f} ns"


def load_all(root):
    r = {}
    for group, variants in GROUPS.items():
        for v in variants:
            x = load(root, group, v)
            if x is not None:
                r[v] = (group, x[0], x[1])
    return r


def main():
    args = sys.argv[1:]
    runs = 1
    if args[:1] == ["--runs"]:
        runs = int(args[1])
        args = args[2:]
    root = args[0] if args else os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
    loads = []
    if runs > 1:
        for i in range(runs):
            subprocess.run(
                ["cargo", "bench", "-q", "-p", "zerotrace-genuine-sdk", "--bench", "track_event",
                 "--", "--warm-up-time", "1", "--measurement-time", "3"],
                check=True, stdout=subprocess.DEVNULL)
            loads.append(load_all(root))
            print(f"run {i + 1} of {runs} done", file=sys.stderr, flush=True)
    else:
        loads.append(load_all(root))
    # Per run ratios, then the median over runs (of figures and of ratios).
    r = {}
    print(f"| group | variant | typical | fastest sample |  (median of {len(loads)} run(s))")
    print("|---|---|---:|---:|")
    for group, variants in GROUPS.items():
        for v in variants:
            xs = [l[v] for l in loads if v in l]
            if not xs:
                continue
            r[v] = [(x[1], x[2]) for x in xs]
            t = statistics.median(x[1] for x in xs)
            f = statistics.median(x[2] for x in xs)
            print(f"| {group} | {v} | {fmt(t)} | {fmt(f)} |")
    print()
    print("| ratio | typical | fastest | goal |")
    print("|---|---:|---:|---|")

    def ratio(label, a, b, goal):
        if a in r and b in r:
            typ = statistics.median(x[0] / y[0] for x, y in zip(r[a], r[b]))
            fast = statistics.median(x[1] / y[1] for x, y in zip(r[a], r[b]))
            print(f"| {label} | {typ:.2f}× | {fast:.2f}× | {goal} |")

    for args in ["no_args", "two_args"]:
        ratio(f"zerotrace / C SDK, {args}", f"zerotrace/{args}", f"perfetto_c_sdk/{args}", "≤ 0.35×")
        ratio(f"zerotrace / floor, {args}", f"zerotrace/{args}", f"floor/{args}", "≤ 2×")
    if "zerotrace/disabled" in r:
        t = statistics.median(x[0] for x in r["zerotrace/disabled"])
        f = statistics.median(x[1] for x in r["zerotrace/disabled"])
        print(f"| zerotrace disabled begin+end | {fmt(t)} | {fmt(f)} | ≤ 1 ns |")
    for layer in ["zerotrace_layer", "tracing_perfetto_sdk_layer", "tracing_perfetto_layer"]:
        goal = "≤ 3×" if layer == "zerotrace_layer" else ""
        ratio(f"{layer} / bare registry", layer, "registry_no_layer", goal)
        ratio(f"{layer} / registry + Identity", layer, "registry_identity_layer", goal)


if __name__ == "__main__":
    main()
