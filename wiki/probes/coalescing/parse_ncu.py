#!/usr/bin/env python3
"""Ratios of each chunked kernel to its coalesced twin, from one or more ncu CSVs.

usage: parse_ncu.py results/ncu-run1.csv [results/ncu-run2.csv]
Prints one row per (type, C): bytes per lane, and for loads and stores the time ratio
(min..max over the runs), the L1 sector ratio, the L2 sector ratio and, for loads, the
DRAM read ratio.
"""
import csv
import re
import sys

SIZES = {"char": 1, "short": 2, "float": 4, "double": 8}


def read(path):
    lines = open(path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    kernels = {}
    for r in csv.DictReader(lines[start:]):
        k = kernels.setdefault(r["ID"], {"name": r["Kernel Name"]})
        k[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    out = {}
    for k in kernels.values():
        m = re.match(r"void (\w+)<(\w+), (\d+)>", k["name"])
        out[(m.group(2), int(m.group(3)), m.group(1))] = k
    return out


runs = [read(p) for p in sys.argv[1:]]
keys = sorted({(t, c) for (t, c, _) in runs[0]}, key=lambda k: (SIZES[k[0]], k[1]))
T = "gpu__time_duration.sum"
print("type\tC\tbytes/lane\tload time\tload L1\tload L2\tload DRAM\tstore time\tstore L1\tstore L2")
for t, c in keys:
    def ratio(run, a, b, metric):
        return run[(t, c, a)][metric] / max(run[(t, c, b)][metric], 1.0)

    def span(a, b):
        v = [ratio(r, a, b, T) for r in runs]
        return f"{min(v):.2f}x" if max(v) - min(v) < 0.005 else f"{min(v):.2f}-{max(v):.2f}x"

    r = runs[0]
    print("\t".join([
        t, str(c), str(c * SIZES[t]),
        span("chunk_ld", "coal_ld"),
        f"{ratio(r, 'chunk_ld', 'coal_ld', 'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum'):.1f}x",
        f"{ratio(r, 'chunk_ld', 'coal_ld', 'lts__t_sectors_srcunit_tex_op_read.sum'):.2f}x",
        f"{ratio(r, 'chunk_ld', 'coal_ld', 'dram__bytes_read.sum'):.2f}x",
        span("chunk_st", "coal_st"),
        f"{ratio(r, 'chunk_st', 'coal_st', 'l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum'):.1f}x",
        f"{ratio(r, 'chunk_st', 'coal_st', 'lts__t_sectors_srcunit_tex_op_write.sum'):.2f}x",
    ]))
