#!/usr/bin/env bash
# Fuzzing smoke run for CI (docs/FUZZING.md): builds the eight cargo-fuzz
# targets once and runs each for 15 seconds on nightly (FUZZ_SECONDS), starting from the
# committed seed corpus (new inputs go to a temporary directory, so the
# working tree is not modified). A crash fails the run; the minimized
# crashes committed under fuzz/regressions/ are replayed on stable by
# `cargo test` (tests/tests/fuzz_regressions.rs), not here.
#
# Budget: ~2 min build + 7 x 15 s on a 2-core machine. The long runs are
# in docs/FUZZING.md (hours, with their execution counts).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

TARGETS=(kkt coverage differential bad_input npy dataset spec embedding_text)
SECONDS_PER_TARGET="${FUZZ_SECONDS:-15}"
# -s none: the crates are #![forbid(unsafe_code)]; -a: overflow checks and
# debug assertions on, so arithmetic overflow is a finding too.
FLAGS=(-s none -a)

cd fuzz
cargo +nightly fuzz build "${FLAGS[@]}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for t in "${TARGETS[@]}"; do
  echo "== fuzz $t for ${SECONDS_PER_TARGET}s"
  mkdir -p "$work/$t"
  # The parsers of outside bytes must also be fast: a unit over 2 s is a
  # finding (docs/FUZZING.md, finding 7).
  extra=()
  case "$t" in npy | dataset | spec) extra=(-timeout=2) ;; esac
  cargo +nightly fuzz run "${FLAGS[@]}" "$t" "$work/$t" "corpus/$t" -- \
    -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -print_final_stats=1 "${extra[@]}" \
    2>&1 | grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)|panicked|reproducer|ERROR|SUMMARY' || true
  # grep ate the exit status; libFuzzer leaves an artifact on a crash.
  if compgen -G "artifacts/$t/*" >/dev/null; then
    echo "fuzz target $t found a failing input:" >&2
    ls "artifacts/$t" >&2
    exit 1
  fi
done
echo "== fuzz smoke run passed"
