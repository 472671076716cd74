#!/bin/bash
# Builds tree_probe.cu, dumps its SASS, and counts shared-memory wavefronts per kernel.
# usage: bash run_tree.sh OUTDIR
set -eu
out=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
nvcc -arch=sm_90 -O3 "$here/tree_probe.cu" -o "$out/tree_probe"
cuobjdump -sass "$out/tree_probe" > "$out/tree_probe.sass"
ncu --clock-control none --csv \
  --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum \
  "$out/tree_probe" > "$out/tree_ncu.csv"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
nvcc --version | tail -2 >> "$out/gpu.txt"
ncu --version | tail -1 >> "$out/gpu.txt"
