#!/usr/bin/env bash
# Reproduces the `mempursuit bench` numbers of BENCHMARKS.md: the issue's
# targets against the roofline (hot and rotating pools), default vs
# `-C target-cpu=native`, f16 / bf16 storage and threads. Run from the
# repository root on an otherwise idle machine; takes a few minutes.
# Optional: DATA=path/to/hotpotqa-distractor for the fixture agreement.
set -euo pipefail
cargo build --release -p mempursuit-cli --bin mempursuit
RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native \
    cargo build --release -p mempursuit-cli --bin mempursuit
B=target/release/mempursuit
N=target/native/release/mempursuit
# One line per run: median / mean / p95 / min of each timed row, and the ratio.
row() { grep -E '^\| (selection|roofline)|selection / roofline' | tr -s ' ' | tr '\n' ' '; echo; }

echo "== targets (default build)"
for cfg in "-p 200 -k 20 -d 1536" "-p 200 -k 20 -d 384" "-p 100 -k 10 -d 384" "-p 100 -k 10 -d 1536"; do
    for run in 1 2; do
        echo "hot $cfg run $run: $($B bench $cfg --roofline --queries 1 --rounds 2000 | row)"
        echo "rotating $cfg run $run: $($B bench $cfg --roofline --rounds 60 | row)"
    done
done
echo "hot -p 500 -k 100 -d 1536: $($B bench -p 500 -k 100 -d 1536 --roofline --queries 1 --rounds 20 | row)"
echo "rotating -p 500 -k 100 -d 1536: $($B bench -p 500 -k 100 -d 1536 --roofline --queries 8 --rounds 5 | row)"

echo "== default vs native (alternating)"
for cfg in "-p 200 -k 20 -d 1536" "-p 200 -k 20 -d 384" "-p 100 -k 10 -d 384"; do
    for run in 1 2; do
        echo "default $cfg run $run: $($B bench $cfg --roofline --rounds 60 | row)"
        echo "native $cfg run $run: $($N bench $cfg --roofline --rounds 60 | row)"
    done
done

echo "== storage (rotating; f32, f16 and bf16 timed round by round in one run)"
# The f16 / f32 and bf16 / f32 ratios of BENCHMARKS.md come from one process.
for cfg in "-p 200 -k 20 -d 1536 --rounds 30" "-p 500 -k 20 -d 1536 --rounds 12" "-p 100 -k 10 -d 384 --rounds 60"; do
    for run in 1 2; do
        echo "storage $cfg run $run:"
        $B bench $cfg --storage f32,f16,bf16 | grep -E '^(cpu|cache):|^\| selection|/ f32|^note:'
    done
done
if [ -n "${DATA:-}" ]; then
    for k in 10 20; do
        for st in f16 bf16; do
            echo "fixture k=$k $st: $($B bench --dir "$DATA" -k $k --storage $st --rounds 3 | grep 'picks vs f32')"
        done
    done
fi

echo "== threads (uptime: $(uptime))"
# One run per shape: 1 thread, one query split over 2, and a batch on 2
# threads with each plan, round by round; speedups against 1 thread.
for cfg in "-p 200 -k 20 -d 1536 --rounds 20" "-p 1000 -k 20 -d 1536 --queries 16 --rounds 6" "-p 200 -k 20 -d 384 --rounds 40" "-p 500 -k 20 -d 1536 --rounds 10"; do
    for run in 1 2; do
        echo "threads $cfg run $run:"
        $B bench $cfg --threads 1,2 --split 1,2 --batch-plan auto,queries,split | grep -E '^  [0-9]|^\| selection|^speedup|^note:'
    done
done
for run in 1 2; do
    echo "threads f16 -p 200 -k 20 -d 1536 run $run:"
    $B bench -p 200 -k 20 -d 1536 --rounds 20 --storage f16 --threads 1,2 --batch-plan auto,queries,split | grep -E '^  [0-9]|^\| selection|^speedup|^note:'
done
