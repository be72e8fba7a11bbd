#!/usr/bin/env bash
# Portability checks (issue 5), run by .ci/run from the repository root on a
# fresh machine with Node.js >= 18:
#  1. mempursuit-core builds for a microcontroller (thumbv7em-none-eabihf:
#     no std, no alloc) and for WebAssembly (wasm32-unknown-unknown) with and
#     without simd128;
#  2. a no_std/no_main Cortex-M4F firmware with the workspace in a static
#     links (embedded-check/, its statics must fit 128 KiB of RAM, and its
#     const assertions pin the 32-bit sizes of docs/PORTABILITY.md);
#  3. where qemu-system-arm is installed, that firmware runs on an emulated
#     Cortex-M4F and its picks must equal the native ones;
#  4. .ci/npm.sh: the npm package in wasm/ builds, and its `node --test`
#     suite requires exactly the native picks on the committed HotpotQA
#     fixture and seeded synthetic pools (and the firmware's picks under
#     QEMU, when it ran), the native error messages, and a working
#     `npm pack` tarball.
set -euo pipefail
cd "$(dirname "$0")/.."

for target in thumbv7em-none-eabihf wasm32-unknown-unknown wasm32-wasip1; do
  if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
  fi
done
command -v node >/dev/null || { echo "portability: Node.js is required (node not found)" >&2; exit 1; }
echo "node $(node --version)"

# Separate target directories per flag set: RUSTFLAGS changes would
# otherwise invalidate each other's artifacts.
echo "== core for thumbv7em-none-eabihf (no std, no alloc; all features: serde, half)"
cargo build -p mempursuit-core --target thumbv7em-none-eabihf --release --all-features

echo "== core for wasm32-unknown-unknown (no simd128)"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="" \
  cargo build -p mempursuit-core --target wasm32-unknown-unknown --release --target-dir target/wasm-nosimd

echo "== core for wasm32-unknown-unknown (+simd128)"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C target-feature=+simd128" \
  cargo build -p mempursuit-core --target wasm32-unknown-unknown --release --target-dir target/wasm-simd128

echo "== simd128 kernel tests under Node.js WASI (wasm32-wasip1, +simd128)"
CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="-C target-feature=+simd128" \
  CARGO_TARGET_WASM32_WASIP1_RUNNER="node $PWD/.ci/wasi-run.mjs" \
  cargo test -p mempursuit-core --lib --target wasm32-wasip1 --target-dir target/wasi-simd128 int8_wasm

echo "== embedded-check: Cortex-M4F firmware links (workspace in a static)"
cargo build --release --target thumbv7em-none-eabihf \
  --manifest-path embedded-check/Cargo.toml --target-dir target/embedded-check
elf=target/embedded-check/thumbv7em-none-eabihf/release/mempursuit-embedded-check
if command -v size >/dev/null; then size -A "$elf" | grep -E '^\.(vector_table|text|rodata|data|bss) ' || true; fi

# Optional: run the firmware on an emulated Cortex-M4F (STM32F405) when
# qemu-system-arm is installed (Debian package qemu-system-arm; not
# installed here because it takes longer than the rest of this script).
qemu_output=""
if command -v qemu-system-arm >/dev/null; then
  echo "== embedded-check under qemu-system-arm (netduinoplus2, Cortex-M4F)"
  cargo build --release --target thumbv7em-none-eabihf --features semihosting \
    --manifest-path embedded-check/Cargo.toml --target-dir target/embedded-qemu
  timeout 120 qemu-system-arm -M netduinoplus2 -nographic -monitor none \
    -semihosting-config enable=on,target=native \
    -kernel target/embedded-qemu/thumbv7em-none-eabihf/release/mempursuit-embedded-check \
    > target/qemu-embedded.txt
  cat target/qemu-embedded.txt
  qemu_output=target/qemu-embedded.txt
else
  echo "== embedded-check under QEMU: skipped (qemu-system-arm not installed)"
fi

echo "== .ci/npm.sh (the npm package in wasm/)"
if [ -n "$qemu_output" ]; then
  MEMPURSUIT_QEMU_OUTPUT="$PWD/$qemu_output" bash .ci/npm.sh
else
  bash .ci/npm.sh
fi
echo "portability: ok"
