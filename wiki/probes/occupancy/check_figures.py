#!/usr/bin/env python3
"""Re-derives, from the data kept in this repository, every occupancy figure that
README.md states under "Figures the wiki pages cite". Run from the repository root:

    python3 wiki/probes/occupancy/check_figures.py

It prints one line per figure and exits non-zero if any of them disagrees with the data.
Data: gpu/tests/data/occupancy_sm90_runtime.csv, gpu/tests/data/occupancy_sm90_carveout.csv,
gpu/tests/data/arch_props.json, wiki/probes/occupancy/kernels_sm90.csv and
wiki/probes/occupancy/device_props_sm90.json.
"""
import csv
import json
import sys

DATA = "gpu/tests/data/"
PROBE = "wiki/probes/occupancy/"
runtime = list(csv.DictReader(open(DATA + "occupancy_sm90_runtime.csv")))
carveout = list(csv.DictReader(open(DATA + "occupancy_sm90_carveout.csv")))
kernels = {r["kernel"]: r for r in csv.DictReader(open(PROBE + "kernels_sm90.csv"))}
props = json.load(open(PROBE + "device_props_sm90.json"))
archs = {a["cc"]: a for a in json.load(open(DATA + "arch_props.json"))["archs"]}
failed = 0


def same(what, got, want):
    global failed
    ok = got == want
    failed += not ok
    print(f"{'ok ' if ok else 'BAD'} {what}: {got}" + ("" if ok else f" (README says {want})"))


def blocks(rows, **inputs):
    """The blocks/SM of every row with these inputs; they must all agree."""
    got = {r["blocks_per_sm"] for r in rows if all(r[k] == str(v) for k, v in inputs.items())}
    if len(got) != 1:
        raise SystemExit(f"rows for {inputs} give {sorted(got)}")
    return int(got.pop())


same("runtime rows", len(runtime), 34560)
same("carveout rows", len(carveout), 3600)
for key, want in [("multiProcessorCount", 132), ("regsPerMultiprocessor", 65536),
                  ("sharedMemPerMultiprocessor", 233472), ("sharedMemPerBlock", 49152),
                  ("sharedMemPerBlockOptin", 232448), ("reservedSharedMemPerBlock", 1024),
                  ("maxThreadsPerMultiProcessor", 2048), ("maxBlocksPerMultiProcessor", 32),
                  ("maxThreadsPerBlock", 1024), ("l2CacheSize", 62914560),
                  ("persistingL2CacheMaxSize", 39321600), ("totalConstMem", 65536)]:
    same(key, props[key], want)

# Registers: blocks/SM with no shared memory, by registers and block size.
table = {
    32: (32, 16, 8, 4, 2), 33: (24, 12, 6, 3, 1), 40: (24, 12, 6, 3, 1), 48: (20, 10, 5, 2, 1),
    56: (18, 9, 4, 2, 1), 64: (16, 8, 4, 2, 1), 65: (14, 7, 3, 1, 0), 72: (14, 7, 3, 1, 0),
    80: (12, 6, 3, 1, 0), 96: (10, 5, 2, 1, 0), 104: (8, 4, 2, 1, 0), 128: (8, 4, 2, 1, 0),
    129: (6, 3, 1, 0, 0), 168: (6, 3, 1, 0, 0), 200: (4, 2, 1, 0, 0), 255: (4, 2, 1, 0, 0),
}
for regs, want in table.items():
    got = tuple(blocks(runtime, num_regs=regs, static_smem_bytes=0, dynamic_smem_bytes=0,
                       threads_per_block=t) for t in (64, 128, 256, 512, 1024))
    same(f"{regs} registers at 64/128/256/512/1024 threads", got, want)
dyn = {0: 16, 1024: 16, 4096: 16, 8192: 16, 16384: 13, 32768: 6, 49152: 4, 65536: 3,
       100000: 2, 131072: 1, 200000: 1, 232448: 1}
for d, want in dyn.items():
    same(f"12 registers, 128 threads, {d} B dynamic",
         blocks(runtime, num_regs=12, static_smem_bytes=0, dynamic_smem_bytes=d,
                threads_per_block=128), want)
same("65 registers, 32-thread blocks (warps/SM)",
     blocks(runtime, num_regs=65, static_smem_bytes=0, dynamic_smem_bytes=0, threads_per_block=32), 28)
same("64 registers, 256 threads, 16 KiB dynamic",
     blocks(runtime, num_regs=64, static_smem_bytes=0, dynamic_smem_bytes=16384, threads_per_block=256), 4)
same("32 registers, 256 threads, 16 KiB dynamic",
     blocks(runtime, num_regs=32, static_smem_bytes=0, dynamic_smem_bytes=16384, threads_per_block=256), 8)

# Shared memory: the 1 KiB reservation, and sizes above the opt-in maximum.
same("8 KiB dynamic, 64 threads, 32 registers",
     blocks(runtime, num_regs=32, static_smem_bytes=0, dynamic_smem_bytes=8192, threads_per_block=64), 25)
over = [r for r in runtime
        if int(r["static_smem_bytes"]) + int(r["dynamic_smem_bytes"]) > props["sharedMemPerBlockOptin"]]
same("rows with static + dynamic > 232448 that give 0 blocks",
     (len(over), all(r["blocks_per_sm"] == "0" for r in over)), (1280, True))

# Carveout: 64 threads, 32 registers, no static shared memory.
for cv, dyn, want in [("-1", 8192, 25), ("100", 8192, 25), ("50", 8192, 14), ("0", 0, 8)]:
    same(f"carveout {cv}, {dyn} B dynamic",
         blocks(carveout, num_regs=32, static_smem_bytes=0, threads_per_block=64,
                dynamic_smem_bytes=dyn, carveout=cv), want)

# Function attributes read with cudaFuncGetAttributes.
for k, regs, local, maxt in [("r16", 24, 1608, 1024), ("r24", 24, 1608, 1024),
                             ("r65", 65, 1096, 896), ("r80", 80, 1032, 768),
                             ("r96", 96, 960, 640), ("r128", 128, 832, 512),
                             ("r129", 129, 832, 384), ("r200", 200, 544, 256),
                             ("r255", 255, 328, 256), ("lb128x4", 128, 832, 128),
                             ("lb256x8", 32, 1312, 256)]:
    r = kernels[k]
    same(f"{k} registers/local bytes/maxThreadsPerBlock",
         (int(r["num_regs"]), int(r["local_bytes"]), int(r["max_threads_per_block"])),
         (regs, local, maxt))
# The launch-bound kernels' own inputs (128 regs at 256 threads; 32 regs at 1024 threads).
same("128 registers at 256 threads (lb128x4 is such a kernel)",
     blocks(runtime, num_regs=128, static_smem_bytes=0, dynamic_smem_bytes=0, threads_per_block=256), 2)
same("32 registers at 1024 threads (lb256x8 is such a kernel)",
     blocks(runtime, num_regs=32, static_smem_bytes=0, dynamic_smem_bytes=0, threads_per_block=1024), 2)

# Other compute capabilities: opt-in maximum, shared memory per SM, reservation.
for cc, want in [("7.0", (98304, 98304, 0)), ("7.5", (65536, 65536, 0)),
                 ("8.0", (166912, 167936, 1024)), ("8.6", (101376, 102400, 1024)),
                 ("8.9", (101376, 102400, 1024)), ("9.0", (232448, 233472, 1024)),
                 ("10.0", (232448, 233472, 1024)), ("12.0", (101376, 102400, 1024))]:
    a = archs[cc]
    same(f"CC {cc} opt-in / per SM / reserved",
         (a["sharedMemPerBlockOptin"], a["sharedMemPerMultiprocessor"], a["reservedSharedMemPerBlock"]),
         want)

sys.exit(1 if failed else 0)
