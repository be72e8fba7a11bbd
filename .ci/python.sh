#!/usr/bin/env bash
# The Python package (python/), run by .ci/run from the repository root on a
# fresh machine with Python >= 3.9 and its venv module:
#  1. rustfmt and clippy (-D warnings) on python/, which is its own Cargo
#     workspace (like fuzz/), so the main workspace's steps do not cover it;
#  2. a fresh virtual environment with maturin, numpy, pytest, hypothesis (the
#     hostile-input property tests) and mypy (its minor version pinned: new
#     stubtest checks come with new versions) from PyPI, and `pip install
#     "./python[haystack,llama-index,langchain,mem0,arrow]"` (maturin builds the
#     extension, stable ABI) with the framework versions of
#     python/tests/integrations/requirements.txt (about 70 s and 300 MB more
#     than the package alone, downloads without a pip cache; of these, Mem0
#     with Qdrant's client about 8 s and 36 MB, faiss-cpu with
#     langchain-community about 9 s and 90 MB) and pyarrow from
#     python/tests/arrow/requirements.txt;
#  3. the Rust API's reference outputs: native orders (the `mempursuit`
#     crate's Selector on the mini fixture, synthetic pools and the
#     embedded-check data) and `mempursuit demo`'s text;
#  4. pytest python/tests against them (exit 5, no test collected, fails),
#     including the conformance vectors (tests/conformance/vectors.json),
#     the hostile-input suite, the README snippets, mypy's stubtest of the
#     type stubs, the framework integrations (Mem0 included) and mempursuit.arrow
#     (MEMPURSUIT_REQUIRE_INTEGRATIONS=1: a missing framework or pyarrow
#     fails instead of skipping).
#
# The Chroma cases of tests/integrations/test_stores.py and test_mem0.py
# need chromadb and langchain-chroma (about 52 s and 350 MB more): they are
# installed from python/tests/integrations/requirements-chroma.txt and the
# cases are required to run; MEMPURSUIT_CI_CHROMA=0 leaves them out (the
# cases are then reported as skipped).
#
# The Ray Data recipe's test (a local Ray of 2 CPUs, about 30 s) needs Ray,
# about 80 MB with pandas: MEMPURSUIT_CI_RAY=1 installs it from
# python/tests/arrow/requirements-ray.txt and requires the test to run;
# without it the test is reported as skipped in pytest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "python: $python not found" >&2; exit 1; }
out=target/python-ci
venv=$out/venv
rm -rf "$venv"
mkdir -p "$out"
"$python" --version

echo "== python/: cargo fmt --check, cargo clippy (all targets, -D warnings)"
export PYO3_PYTHON="$python"
cargo fmt --manifest-path python/Cargo.toml --check
cargo clippy --manifest-path python/Cargo.toml --locked --all-targets -- -D warnings

echo "== virtual environment: maturin, numpy, pytest, hypothesis, mypy (stub checks)"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "maturin>=1.9.4,<2" numpy pytest hypothesis "mypy>=2.4,<2.5"
"$venv/bin/python" -m pip --version

echo "== pip install ./python with the integrations' and Arrow's extras"
# The wheel is built without LTO and with parallel codegen units: the tests
# check behaviour, not speed, and this halves the build on 2 cores.
CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
  "$venv/bin/python" -m pip install "./python[haystack,llama-index,langchain,mem0,arrow]" \
  -r python/tests/integrations/requirements.txt -r python/tests/arrow/requirements.txt
chroma_required=0
if [ "${MEMPURSUIT_CI_CHROMA:-1}" = 1 ]; then
  echo "== Chroma (MEMPURSUIT_CI_CHROMA=0 leaves it out)"
  "$venv/bin/python" -m pip install --quiet -r python/tests/integrations/requirements-chroma.txt
  chroma_required=1
fi
ray_required=0
if [ "${MEMPURSUIT_CI_RAY:-0}" = 1 ]; then
  echo "== Ray Data (MEMPURSUIT_CI_RAY=1)"
  "$venv/bin/python" -m pip install --quiet -r python/tests/arrow/requirements-ray.txt
  ray_required=1
fi
"$venv/bin/python" -m pip list 2>/dev/null | grep -iE '^(haystack-ai|llama-index-core|langchain-core|langchain-classic|langchain-community|mem0ai|faiss-cpu|chromadb|pyarrow|ray) '
"$venv/bin/python" -c "import mempursuit; print('mempursuit', mempursuit.__version__, mempursuit.__file__)"

echo "== reference outputs of the Rust API"
cargo run -q -p mempursuit-wasm --example native_orders -- cli/data/hotpotqa-mini > "$out/native-orders.json"
cargo run -q -p mempursuit-cli -- demo > "$out/demo.txt"

echo "== pytest python/tests"
# Run from the repository root, so `import mempursuit` is the installed
# package, not the sources in python/mempursuit/.
# Ray (the Arrow engine test, when installed) starts a local cluster: no usage report;
# Haystack, Mem0 and Chroma send no telemetry either (the machine is offline).
rc=0
RAY_USAGE_STATS_ENABLED=0 \
  HAYSTACK_TELEMETRY_ENABLED=False \
  MEMPURSUIT_NATIVE_ORDERS="$PWD/$out/native-orders.json" \
  MEMPURSUIT_DEMO_OUTPUT="$PWD/$out/demo.txt" \
  MEMPURSUIT_REQUIRE_RUST=1 \
  MEMPURSUIT_REQUIRE_INTEGRATIONS=1 \
  MEMPURSUIT_REQUIRE_RAY=$ray_required \
  MEMPURSUIT_REQUIRE_CHROMA=$chroma_required \
  MEM0_TELEMETRY=False \
  ANONYMIZED_TELEMETRY=False \
  "$venv/bin/python" -m pytest python/tests -q -rs -p no:cacheprovider || rc=$?
if [ "$rc" -eq 5 ]; then
  echo "python: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
