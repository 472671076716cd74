#!/bin/sh
# Builds and profiles chunk_probe.cu; writes ncu-run1.csv, ncu-run2.csv and the SASS
# instruction counts into the folder given as $1 (default: results).
set -e
dir=${1:-results}
mkdir -p "$dir"
nvcc -arch=sm_90 -O3 -o chunk_probe chunk_probe.cu
cuobjdump -sass chunk_probe | grep -E "Function|LDG|STG" > "$dir/sass.txt"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
for r in 1 2; do
  ncu --metrics $M --csv ./chunk_probe > "$dir/ncu-run$r.csv"
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$dir/gpu.txt"
nvcc --version | tail -2 >> "$dir/gpu.txt"
