#!/usr/bin/env bash
# Builds the WebAssembly module: release, wasm32-unknown-unknown, with the
# simd128 target feature (set MEMPURSUIT_WASM_SIMD=0 for a build without it,
# for runtimes that lack WebAssembly SIMD).
#
# Output: wasm/mempursuit.wasm, the module of the npm package in wasm/
# (the file `init()` of wasm/mempursuit.js loads by default; listed in
# package.json's "files", so `npm pack` in wasm/ ships it). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi

if [ "${MEMPURSUIT_WASM_SIMD:-1}" = "0" ]; then
  flags=""
  dir=target/wasm-nosimd
else
  flags="-C target-feature=+simd128"
  dir=target/wasm-simd128
fi
# A target directory of its own per flag set, so switching does not rebuild
# the rest of the workspace's wasm32 artifacts. `cargo rustc` passes
# `-C strip=symbols` to this crate's link only (the dependencies keep the
# flags .ci/portability.sh builds them with): the module ships without its
# name section (about 20 KB of function names).
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$flags" \
  cargo rustc -p mempursuit-wasm --lib --release \
  --target wasm32-unknown-unknown --target-dir "$dir" -- -C strip=symbols

cp "$dir/wasm32-unknown-unknown/release/mempursuit_wasm.wasm" wasm/mempursuit.wasm
echo "wasm/mempursuit.wasm: $(wc -c < wasm/mempursuit.wasm) bytes, $(gzip -9 -c wasm/mempursuit.wasm | wc -c) gzipped (${flags:-no simd128})"
