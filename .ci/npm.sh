#!/usr/bin/env bash
# The npm package `mempursuit` (wasm/), run by .ci/portability.sh on a fresh
# machine with Node.js >= 18 and npm:
#  1. `npm ci` in wasm/ (dev dependencies only: TypeScript, for the type
#     check of the declarations, esbuild, for the bundling tests, and the
#     frameworks of the integrations, `ai` and `@langchain/core`);
#  2. the wasm module (release, simd128) into the package folder;
#  3. the native reference (picks and error messages) from
#     wasm/examples/native_orders.rs;
#  4. `node --test` (wasm/test/*.test.mjs): the conformance vectors
#     (tests/conformance/vectors.json: picks, steps, stop reasons, error
#     kinds and messages) and the declarations against the module's
#     layout; identical picks to native on the committed HotpotQA fixture
#     and seeded synthetic pools; the API and every option; hostile
#     arguments (detached, shared and resizable buffers, wrong kinds,
#     non-numbers, huge sizes, throwing getters, proxies, a seeded property
#     test); CommonJS, ES module and browser bundles (init() rejects with
#     its advice where it cannot find the module); the Vercel AI SDK and
#     LangChain.js integrations with the real packages (offline, counted
#     embedding calls); every ```js block of
#     wasm/README.md and README.md run as pasted; `npm pack` and an offline
#     install of the tarball into an empty project, `tsc --noEmit` on a
#     usage file against the installed package; with MEMPURSUIT_QEMU_OUTPUT
#     set, the firmware's picks under QEMU too;
#  5. the example.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v node >/dev/null || { echo "npm.sh: Node.js >= 18 is required (node not found)" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm.sh: npm is required" >&2; exit 1; }
echo "node $(node --version), npm $(npm --version)"

echo "== npm ci (wasm/)"
start=$(date +%s)
(cd wasm && npm ci --no-audit --no-fund)
echo "npm ci: $(( $(date +%s) - start )) s"

echo "== wasm module (release, simd128) -> wasm/mempursuit.wasm"
bash wasm/build.sh

echo "== native reference orders and error messages"
mkdir -p target
# With --strict-order the example runs every call with the StrictOrder executor: the unfused
# kernels, the same bits as wasm and the firmware.
cargo run -q -p mempursuit-wasm --example native_orders -- --strict-order cli/data/hotpotqa-mini > target/native-orders.json

echo "== node --test (wasm/test)"
(cd wasm && MEMPURSUIT_NATIVE_ORDERS=../target/native-orders.json MEMPURSUIT_REQUIRE_DEV=1 \
  node --test --test-reporter=spec test/)

echo "== wasm/example.mjs"
node wasm/example.mjs > /dev/null
echo "npm: ok"
