#!/usr/bin/env bash
# Miri (run by .ci/run from the repository root): the core's and std-ext's
# unit tests, the thread-split tests (std-ext/tests/parallel.rs) and the
# unit tests of the WebAssembly module's C ABI (wasm/src/lib.rs) under
# the Miri interpreter, which reports undefined behaviour and data races:
# under Stacked Borrows (and Tree Borrows on request, below). The
# unsafe code it checks is the worker protocol of `parallel::SplitPool`
# (the hand-off of a pass's jobs to worker threads) and the C ABI's
# pointers (slices over caller memory, the selector's box); the AVX2 kernels need a
# real CPU (under Miri the CPU-feature check fails and the portable kernels
# run).
#
# CI runs Stacked Borrows only (the whole script takes about 5 minutes on a
# 2-core machine; each aliasing model doubles it). Tree Borrows, the other
# model, is one variable away and passes today:
#   MIRI_MODELS="stacked tree" bash .ci/miri.sh
#
# Miri cannot run inline assembly, which libm uses for sqrt on x86-64, so
# the core is built with its `soft-float` feature (libm's portable,
# correctly rounded sqrt: same results). Tests cut their sizes under
# `cfg(miri)` (and skip the ones that run only safe arithmetic, with the
# reason).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
rustup +nightly component add miri rust-src >/dev/null
cargo +nightly miri setup >/dev/null

core_features="half,soft-float"
# `synth` brings rand for the thread-split tests; its own (slow) unit tests
# are skipped here.
ext_features="half,synth,mempursuit-core/soft-float"
for model in ${MIRI_MODELS:-stacked}; do
  flags="-Zmiri-strict-provenance"
  if [ "$model" = tree ]; then
    flags="$flags -Zmiri-tree-borrows"
  fi
  echo "== miri ($model borrows): mempursuit-core unit tests"
  MIRIFLAGS="$flags" cargo +nightly miri test -p mempursuit-core --lib \
    --features "$core_features"
  echo "== miri ($model borrows): mempursuit unit tests and thread-split tests"
  MIRIFLAGS="$flags" cargo +nightly miri test -p mempursuit --no-default-features \
    --features "$ext_features" --lib --test parallel -- --skip synth::
  echo "== miri ($model borrows): mempursuit-wasm unit tests (the C ABI's pointers)"
  MIRIFLAGS="$flags" cargo +nightly miri test -p mempursuit-wasm --lib --features soft-float
done
echo "== miri passed"
