#!/usr/bin/env bash
# Reproduces the store table of BENCHMARKS.md ("Store mode", issue 29): per
# query, the per-call f32 pursuit (unscreened and screened) against `Store`
# calls by ids with each storage, timed round by round in one process on the
# same pools (HotpotQA store pools, MiniLM and E5, each query's P nearest
# memories tiled 4× to d = 1536, where ../shared/data exists; random pools
# always), P = 200 and 1000, K = 20 and 50; then the same with the int8
# passes on the AVX2 kernel (the figure of a CPU without VNNI); and the build
# time of a 100,000 × 384 store per storage. Run from the repository root;
# a few minutes on 2 cores. Options: DATA=dir (default ../shared/data),
# QUERIES=n (24), ROUNDS=r (5).
# The last line: `store mode / per-call f32: K=20 X, K=50 Y` (the fastest
# exact storage, f32 or int8, medians, MiniLM store pools at P = 200, or
# random pools without the data).
set -euo pipefail
cargo build --release -p mempursuit-cli --example store_report
B=target/release/examples/store_report
DATA=${DATA:-../shared/data}
ARGS=(--queries "${QUERIES:-24}" --rounds "${ROUNDS:-5}")
if [ -d "$DATA/hotpotqa-distractor" ]; then
    ARGS+=(--data "$DATA")
fi
grep -m1 'model name' /proc/cpuinfo || true
grep -m1 -o -w -E 'avx512_vnni|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ' || true
echo
echo "== the int8 passes on the AVX2 kernel (no VNNI), store int8 only differs"
"$B" "${ARGS[@]}" --int8-kernel avx2 --build-rows 1000 | grep -E 'int8 kernel|store int8|per-call f32, unscreened|^store mode'
echo "== the best kernel of this CPU"
"$B" "${ARGS[@]}"
