// npm's prepack step (package.json): `npm pack` and `npm publish` in wasm/
// stop with one line, not a stack, when the module is not built yet.
if (!require('fs').existsSync(require('path').join(__dirname, 'mempursuit.wasm'))) {
  console.error('mempursuit.wasm is missing: build it first with bash wasm/build.sh (from the repository root) or npm run build');
  process.exit(1);
}
