#!/usr/bin/env bash
# Per-query latency of the WASM build (Node.js) vs a default native release
# build at P = 200, K = 20, d = 384 (seeded random unit vectors, identical in
# both; see wasm/bench.mjs and wasm/examples/native_latency.rs).
#
#   bash wasm/latency.sh [REPEATS] [ROUNDS]
#
# Runs native and wasm alternately REPEATS times (default 3), each over 64
# cases x ROUNDS rounds (default 20), so both see the same machine load.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
rounds=${2:-20}
cargo build -q --release -p mempursuit-wasm --example native_latency
bash wasm/build.sh > /dev/null
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$repeats"); do
  echo "-- repeat $r"
  target/release/examples/native_latency "$rounds"
  node wasm/bench.mjs "$rounds"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
