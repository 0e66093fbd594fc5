#!/usr/bin/env python3
"""Summarizes a run of `cargo bench -p zerotrace-genuine-sdk --bench track_event`.

Prints, as Markdown, the time per slice (begin + end) or per span of every
variant, from criterion's typical estimate and from the fastest sample, then
the ratios the issue's goals are stated in: zerotrace vs the genuine C SDK
(goal <= 0.35), vs the floor (goal <= 2), the disabled cost (goal <= 1 ns),
and the tracing layers vs a registry with no layer and one with the
Identity layer (goal for ours <= 3).

Usage: python3 tracing-core/interop/genuine-sdk/benches/track_event_ratios.py [criterion dir]
(default: $CARGO_TARGET_DIR/criterion, else target/criterion)
"""

import json
import os
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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
    r = {}
    print("| group | variant | typical | fastest sample |")
    print("|---|---|---:|---:|")
    for group, variants in GROUPS.items():
        for v in variants:
            x = load(root, group, v)
            if x is None:
                continue
            r[v] = x
            print(f"| {group} | {v} | {fmt(x[0])} | {fmt(x[1])} |")
    print()
    print("| ratio | typical | fastest | goal |")
    print("|---|---:|---:|---|")

    def ratio(label, a, b, goal):
        if a in r and b in r:
            print(f"| {label} | {r[a][0] / r[b][0]:.2f}× | {r[a][1] / r[b][1]:.2f}× | {goal} |")

    for args in ["no_args", "two_args"]:
        ratio(f"zerotrace / C SDK, {args}", f"zerotrace/{args}", f"perfetto_c_sdk/{args}", "≤ 0.35×")
        ratio(f"zerotrace / floor, {args}", f"zerotrace/{args}", f"floor/{args}", "≤ 2×")
    if "zerotrace/disabled" in r:
        t, f = r["zerotrace/disabled"]
        print(f"| zerotrace disabled begin+end | {fmt(t)} | {fmt(f)} | ≤ 1 ns |")
    for layer in ["zerotrace_layer", "tracing_perfetto_sdk_layer", "tracing_perfetto_layer"]:
        goal = "≤ 3×" if layer == "zerotrace_layer" else ""
        ratio(f"{layer} / bare registry", layer, "registry_no_layer", goal)
        ratio(f"{layer} / registry + Identity", layer, "registry_identity_layer", goal)


if __name__ == "__main__":
    main()
