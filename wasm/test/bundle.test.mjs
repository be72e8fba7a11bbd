// The package inside bundles (esbuild, a dev dependency): to CommonJS, to an
// ES module for Node.js and for browsers, and to a browser script (IIFE).
// A bundle without `import.meta.url` (CommonJS, IIFE) cannot build
// init()'s default location: init() must not throw synchronously but
// reject with a MemPursuitError that says how to pass the .wasm path, URL
// or bytes, and init() with the bytes must then work. Every bundle must
// build (no unresolvable `node:` import in a browser bundle).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installPackage } from '../test-util/project.mjs';

let esbuild = null;
try {
  esbuild = await import('esbuild');
} catch {
  // reported by the skip below
}
const skip = !esbuild && !process.env.MEMPURSUIT_REQUIRE_DEV && 'esbuild not installed (run npm ci in wasm/)';

// A project with the package installed as users get it (its "files").
const tmp = mkdtempSync(join(tmpdir(), 'mempursuit-bundle-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const installed = installPackage(tmp);
writeFileSync(join(tmp, 'package.json'), JSON.stringify({ name: 'app', private: true }));

// The application: init() without an argument (reporting whether it threw
// synchronously), then init() from the bytes, then a selection.
const APP = `
import { init, select, MemPursuitError } from 'mempursuit';
import { readFileSync } from 'node:fs';
async function main() {
  const out = {};
  let promise;
  try {
    promise = init();
    out.synchronous = 'returned';
  } catch (err) {
    out.synchronous = 'threw ' + err;
  }
  try {
    await promise;
    out.default = 'resolved';
  } catch (err) {
    out.default = { name: err.name, code: err.code, isMemPursuitError: err instanceof MemPursuitError, message: err.message };
  }
  if (out.default !== 'resolved') await init(readFileSync(process.env.MEMPURSUIT_WASM));
  out.picks = Array.from(select([0.7071, 0.7071, 0, 0], [[1, 0.07, 0, 0], [1, 0.08, 0.05, 0], [1, 0.075, 0, 0.04], [0, 1, 0, 0.05]], 2).picks);
  console.log(JSON.stringify(out));
}
main();
`;
writeFileSync(join(tmp, 'app.js'), APP);

async function bundle(format, platform, outfile) {
  assert.ok(esbuild, 'MEMPURSUIT_REQUIRE_DEV is set but esbuild is missing: run npm ci in wasm/');
  const result = await esbuild.build({
    entryPoints: [join(tmp, 'app.js')],
    absWorkingDir: tmp,
    bundle: true,
    format,
    platform,
    outfile: join(tmp, outfile),
    logLevel: 'silent',
    external: ['node:fs'],
  });
  assert.deepEqual(result.errors, []);
  return join(tmp, outfile);
}

const run = (file, env = {}) =>
  JSON.parse(execFileSync(process.execPath, [file], { cwd: tmp, encoding: 'utf8', env: { ...process.env, MEMPURSUIT_WASM: join(installed, 'mempursuit.wasm'), ...env } }));

const TEXTBOOK_PICKS = [1, 3];

test('a CommonJS bundle: init() rejects with a MemPursuitError that says how to pass the module, then works from the bytes', { skip }, async () => {
  const file = await bundle('cjs', 'node', 'dist/app.cjs');
  const out = run(file);
  assert.equal(out.synchronous, 'returned', 'init() does not throw synchronously');
  assert.equal(typeof out.default, 'object', 'init() rejects');
  assert.equal(out.default.name, 'MemPursuitError');
  assert.equal(out.default.code, 'argument');
  assert.ok(out.default.isMemPursuitError);
  assert.match(out.default.message, /^init\(\): the default location of mempursuit\.wasm .* is not available here \(e\.g\. in a CommonJS bundle\)\. Pass the module yourself: its path or URL/);
  assert.match(out.default.message, /readFileSync\(require\.resolve\('mempursuit\/mempursuit\.wasm'\)\)/);
  assert.deepEqual(out.picks, TEXTBOOK_PICKS);
});

test("the CommonJS message's own advice works: readFileSync(require.resolve('mempursuit/mempursuit.wasm'))", { skip }, async () => {
  writeFileSync(
    join(tmp, 'advice.js'),
    `const { init, select } = require('mempursuit');
const { readFileSync } = require('node:fs');
init(readFileSync(require.resolve('mempursuit/mempursuit.wasm'))).then(() => console.log(JSON.stringify(Array.from(select([1, 0], [[0, 1], [1, 0]], 1).picks))));`,
  );
  const result = await esbuild.build({ entryPoints: [join(tmp, 'advice.js')], absWorkingDir: tmp, bundle: true, format: 'cjs', platform: 'node', outfile: join(tmp, 'dist/advice.cjs'), logLevel: 'silent' });
  assert.deepEqual(result.errors, []);
  assert.deepEqual(run(join(tmp, 'dist/advice.cjs')), [1]);
});

test('an ES module bundle for Node.js: init() loads mempursuit.wasm next to the bundle, or rejects naming where it looked', { skip }, async () => {
  const file = await bundle('esm', 'node', 'esm/app.mjs');
  const missing = run(file);
  assert.equal(missing.synchronous, 'returned');
  assert.equal(missing.default.code, 'argument');
  assert.match(missing.default.message, /^init\(\): cannot load the WebAssembly module from file:.*\/esm\/mempursuit\.wasm: .*ENOENT.*\. Pass the \.wasm file's path or URL, a fetch\(\) Response, or its bytes; in a clone of the repository, build it first with `bash wasm\/build\.sh`$/);
  assert.deepEqual(missing.picks, TEXTBOOK_PICKS);
  copyFileSync(join(installed, 'mempursuit.wasm'), join(tmp, 'esm', 'mempursuit.wasm'));
  const shipped = run(file);
  assert.equal(shipped.default, 'resolved');
  assert.deepEqual(shipped.picks, TEXTBOOK_PICKS);
});

test('browser bundles build (no node: import to resolve) and keep the module URL for the host to ship', { skip }, async () => {
  const file = await bundle('esm', 'browser', 'web/app.mjs');
  const text = readFileSync(file, 'utf8');
  assert.match(text, /new URL\("\.\/mempursuit\.wasm", import\.meta\.url\)/);
  // A classic script (IIFE) has no import.meta: init() rejects with the advice.
  const script = await bundle('iife', 'browser', 'web/app.js');
  const out = run(script);
  assert.equal(out.synchronous, 'returned');
  assert.equal(out.default.code, 'argument');
  assert.match(out.default.message, /is not available here/);
  assert.deepEqual(out.picks, TEXTBOOK_PICKS);
});
