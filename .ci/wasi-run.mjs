// Runs a wasm32-wasip1 test binary under Node.js WASI (a cargo runner:
// CARGO_TARGET_WASM32_WASIP1_RUNNER="node $PWD/.ci/wasi-run.mjs", an
// absolute path: cargo runs tests in the package folder).
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import { argv, exit } from 'node:process';
const wasi = new WASI({ version: 'preview1', args: argv.slice(2), env: {}, returnOnExit: true });
const mod = await WebAssembly.compile(await readFile(argv[2]));
const inst = await WebAssembly.instantiate(mod, wasi.getImportObject());
exit(wasi.start(inst));
