#!/usr/bin/env python3
"""Runs the `smb` bench's slice-begin group several times and prints the
median time of each variant and of the SMB-to-heap ratios.

Each run measures heap, then the SMB with one writer thread, then with two,
one after the other in one process, so the runs interleave the variants;
the median over the runs damps the shared machine's drift.

Usage: python3 tracing-core/benches/smb_ratios.py [runs] (default 5), from the
repository's root. It builds the bench first (`cargo bench --no-run`).
"""

import re
import statistics
import subprocess
import sys

VARIANTS = ["heap", "smb_1_thread", "smb_2_threads"]
UNITS = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6}


def run_once():
    out = subprocess.run(
        ["cargo", "bench", "-q", "-p", "zerotrace-core", "--bench", "smb", "--",
         "--warm-up-time", "1", "--measurement-time", "3", "smb_slice_begin/"],
        check=True, capture_output=True, text=True).stdout
    times = {}
    current = None
    for line in out.splitlines():
        m = re.match(r"smb_slice_begin/(\S+)", line.strip())
        if m:
            current = m.group(1)
        m = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+)", line)
        if m and current:
            times[current] = float(m.group(1)) * UNITS[m.group(2)]
            current = None
    return times


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    subprocess.run(["cargo", "bench", "-q", "-p", "zerotrace-core", "--bench", "smb", "--no-run"],
                   check=True)
    results = []
    for i in range(runs):
        t = run_once()
        results.append(t)
        row = ", ".join(f"{v} {t[v]:.1f} ns" for v in VARIANTS if v in t)
        print(f"run {i + 1}: {row}", flush=True)
    print()
    print("| variant | median time / packet | median ratio to heap (per run) |")
    print("|---|---:|---:|")
    for v in VARIANTS:
        ts = [r[v] for r in results if v in r]
        ratios = [r[v] / r["heap"] for r in results if v in r and "heap" in r]
        print(f"| {v} | {statistics.median(ts):.1f} ns | {statistics.median(ratios):.2f}× |")


if __name__ == "__main__":
    main()
