#!/usr/bin/env bash
# The runnable examples of the wiki's race page under the sanitizers, and the report's
# known cases' theoretical occupancy and register counts from Nsight Compute.
#   ide/tests/data/gpu-evidence/wiki.sh OUTDIR
# Writes OUTDIR/wiki_races.txt and OUTDIR/report_occupancy.csv.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
out="${1:?usage: wiki.sh OUTDIR}"
mkdir -p "$out"
work="$(mktemp -d)"
arch="${ARCH:-sm_90}"
page="$root/wiki/pages/pitfalls/data-race.md"
# Each ```cuda block of the page that has a host main is one program: example-1.cu, ...
awk -v dir="$work" '
  /^```cuda/ { n++; f = dir "/example-" n ".cu"; inblk = 1; next }
  /^```/ && inblk { inblk = 0; close(f); next }
  inblk { print > f }' "$page"
: > "$out/wiki_races.txt"
for src in "$work"/example-*.cu; do
  grep -q 'int main' "$src" || continue
  n=$(basename "$src" .cu)
  nvcc -arch="$arch" -lineinfo -O2 -o "$work/$n" "$src" > "$work/$n.build" 2>&1 || { echo "=== $n: build failed" >> "$out/wiki_races.txt"; cat "$work/$n.build" >> "$out/wiki_races.txt"; continue; }
  { echo "=== $n ($(grep -m1 '__global__' "$src" | sed 's/(.*//'))"
    timeout 200 compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 3 "$work/$n" 2>&1 | grep -E 'RACECHECK SUMMARY|Race reported|Thread|done' | head -8
    timeout 120 compute-sanitizer --tool synccheck "$work/$n" 2>&1 | grep -E 'ERROR SUMMARY' | sed 's/^/synccheck: /'
  } >> "$out/wiki_races.txt"
done
: > "$out/report_occupancy.csv"
for src in "$here"/../report/*.cu; do
  n=$(basename "$src" .cu)
  nvcc -arch="$arch" -lineinfo -O2 -o "$work/r-$n" "$src" > /dev/null 2>&1 || continue
  timeout 120 ncu --clock-control none --csv \
    --metrics launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,sm__maximum_warps_per_active_cycle_pct,sm__warps_active.avg.pct_of_peak_sustained_active \
    "$work/r-$n" 2>/dev/null | grep -v '^==' | sed "s/^/$n,/" >> "$out/report_occupancy.csv"
done
echo "done"
