#!/usr/bin/env bash
# Per-instruction Nsight Compute source counters for the kernel report's known cases, and
# racecheck given time to finish on the two race programs with the most hazards.
#   ide/tests/data/gpu-evidence/source.sh OUTDIR
# Writes OUTDIR/report_sass.csv (SASS lines with their CUDA line and memory counters) and
# OUTDIR/racecheck_long.txt (the racecheck summaries).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
data="$(cd "$here/.." && pwd)"
out="${1:?usage: source.sh OUTDIR}"
mkdir -p "$out"
work="$(mktemp -d)"
arch="${ARCH:-sm_90}"
for src in "$data"/report/*.cu "$data"/races/gemm_missing_second_barrier.cu "$data"/races/transpose_no_barrier.cu; do
  n=$(basename "$src" .cu)
  nvcc -arch="$arch" -lineinfo -O2 -o "$work/$n" "$src" > /dev/null 2>&1 &
done
wait
for n in gemm_missing_second_barrier transpose_no_barrier; do
  ( r=$(timeout 500 compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 4 "$work/$n" 2>&1)
    { echo "=== $n"; printf '%s\n' "$r" | grep -E 'RACECHECK SUMMARY|Race reported|Thread' | head -8; } > "$work/long-$n.txt" ) &
done
: > "$out/report_sass.csv"
for src in "$data"/report/*.cu; do
  n=$(basename "$src" .cu)
  timeout 200 ncu --clock-control none --set full --import-source yes -o "$work/$n" "$work/$n" > /dev/null 2>&1 || continue
  echo "=== $n" >> "$out/report_sass.csv"
  ncu -i "$work/$n.ncu-rep" --page source --csv --print-source cuda,sass 2>&1 | head -3 | cut -c1-1500 >> "$out/report_sass.csv"
  ncu -i "$work/$n.ncu-rep" --page source --csv --print-source sass 2>&1 \
    | grep -E '"# Address"|"Address"|LDS|STS|LDG|STG|LDL|STL|LDGSTS|ATOM' | cut -c1-1500 | head -40 >> "$out/report_sass.csv"
done
wait
cat "$work"/long-*.txt > "$out/racecheck_long.txt" 2>/dev/null
echo "done: $(grep -c . "$out/report_sass.csv") sass lines"
