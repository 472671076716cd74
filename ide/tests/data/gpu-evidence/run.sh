#!/usr/bin/env bash
# GPU evidence for the race rules and the kernel report (see README.md here).
# Runs on a machine with an NVIDIA GPU, nvcc, compute-sanitizer and ncu:
#   ide/tests/data/gpu-evidence/run.sh OUTDIR
# Writes OUTDIR/races.tsv (each race-set file: racecheck and synccheck verdicts),
# OUTDIR/racecheck.txt (the sanitizer's own reports, trimmed), OUTDIR/report_metrics.csv
# (Nsight Compute counters per kernel of the report's known cases) and
# OUTDIR/report_source.txt (per-line source counters where ncu gives them).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
data="$(cd "$here/.." && pwd)"
out="${1:?usage: run.sh OUTDIR}"
mkdir -p "$out"
work="$(mktemp -d)"
arch="${ARCH:-sm_90}"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1;
  compute-sanitizer --version | head -1; ncu --version | tail -1; } > "$out/machine.txt" 2>&1

# Build every program in parallel.
ls "$data"/races/*.cu "$data"/report/*.cu | xargs -P 16 -I{} sh -c \
  'n=$(basename {} .cu); d=$(basename $(dirname {})); nvcc -arch='"$arch"' -lineinfo -O2 -o '"$work"'/$d-$n {} > '"$work"'/$d-$n.build 2>&1 || echo "build failed: {}" >> '"$out"'/build_failures.txt'

printf 'file\tlabel\tracecheck_hazards\tracecheck_errors\tsynccheck_errors\texit\n' > "$out/races.tsv"
: > "$out/racecheck.txt"
# One race program: racecheck (shared-memory hazards), synccheck, and a plain run.
one_race() {
  src="$1"; work="$2"
  n=$(basename "$src" .cu)
  bin="$work/races-$n"
  row="$work/row-$n"; rep="$work/rep-$n"
  [ -x "$bin" ] || { printf '%s\t-\tbuild failed\n' "$n" > "$row"; : > "$rep"; return; }
  if grep -q '// race:' "$src"; then label=racy; else label=clean; fi
  rc=$(timeout 150 compute-sanitizer --tool racecheck --racecheck-report hazard "$bin" 2>&1)
  summary=$(printf '%s\n' "$rc" | grep -o 'RACECHECK SUMMARY: [0-9]* hazard[s]* displayed ([0-9]* error[s]*, [0-9]* warning[s]*)' | head -1)
  errors=$(printf '%s\n' "$summary" | grep -o '([0-9]* error' | grep -o '[0-9]*' || echo 0)
  sc=$(timeout 150 compute-sanitizer --tool synccheck "$bin" 2>&1)
  sync_errors=$(printf '%s\n' "$sc" | grep -o 'ERROR SUMMARY: [0-9]*' | grep -o '[0-9]*$' | head -1)
  timeout 60 "$bin" > /dev/null 2>&1; code=$?
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$label" "${summary:-none}" "${errors:-0}" "${sync_errors:-?}" "$code" > "$row"
  { echo "=== $n ($label)"; printf '%s\n' "$rc" | grep -E 'RACECHECK SUMMARY|(Error|Warning): Race reported|Write Thread|Read Thread|at .*\.cu:[0-9]+' | head -12;
    printf '%s\n' "$sc" | grep -E 'Barrier error|Divergent|at .*\.cu:[0-9]+|ERROR SUMMARY' | head -6 | sed 's/^/synccheck: /'; } > "$rep"
}
export -f one_race
ls "$data"/races/*.cu | xargs -P 8 -I{} bash -c 'one_race "$1" "$2"' _ {} "$work"
for src in "$data"/races/*.cu; do
  n=$(basename "$src" .cu)
  cat "$work/row-$n" >> "$out/races.tsv" 2>/dev/null
  cat "$work/rep-$n" >> "$out/racecheck.txt" 2>/dev/null
done

# Nsight Compute: per-kernel counters and per-line source counters of the report's cases.
metrics=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active
: > "$out/report_metrics.csv"
: > "$out/report_source.txt"
for src in "$data"/report/*.cu; do
  n=$(basename "$src" .cu)
  bin="$work/report-$n"
  [ -x "$bin" ] || continue
  timeout 180 ncu --clock-control none --metrics "$metrics" --csv "$bin" 2>/dev/null \
    | grep -v '^==' | sed "s/^/$n,/" >> "$out/report_metrics.csv"
  timeout 180 ncu --clock-control none --set full --import-source yes -o "$work/$n" "$bin" > /dev/null 2>&1 \
    && { echo "=== $n"; ncu -i "$work/$n.ncu-rep" --page source --csv --print-source cuda 2>/dev/null \
         | cut -c1-600 | head -200; } >> "$out/report_source.txt"
done
echo "done: $(wc -l < "$out/races.tsv") race rows, $(wc -l < "$out/report_metrics.csv") metric rows"
