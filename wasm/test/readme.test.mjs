// Every ```js block of the package's README (wasm/README.md) and of the
// repository's README.md runs as pasted: each is written to its own .mjs
// file in a project where the package is installed as users get it, run
// with Node.js, and must exit 0; in a block with `// prints: TEXT`
// comments, those TEXTs in order must be exactly its output, line by
// line. The ```json block of wasm/README.md is the tsconfig.json
// package.test.mjs type-checks with; the module size the README states
// must be the built module's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { blocks } from '../test-util/markdown.mjs';
import { installPackage, linkDevDependencies, noDevDependencies, wasmDir } from '../test-util/project.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

const tmp = mkdtempSync(join(tmpdir(), 'mempursuit-readme-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
installPackage(tmp);
// The framework sections import `ai` and `@langchain/core` (dev dependencies):
// without `npm ci` in wasm/ those blocks are skipped with the reason (a
// failure under MEMPURSUIT_REQUIRE_DEV=1, as in bundle.test.mjs).
const devDependencies = linkDevDependencies(tmp);
assert.ok(devDependencies || !process.env.MEMPURSUIT_REQUIRE_DEV, `MEMPURSUIT_REQUIRE_DEV is set but ${noDevDependencies}`);
writeFileSync(join(tmp, 'package.json'), JSON.stringify({ name: 'readme', private: true, type: 'module' }));

/** Whether a block imports a dev dependency (a framework). */
const needsDev = (code) => /from\s+['"](ai|@langchain\/[\w-]+|mempursuit\/langchain)['"]/.test(code);

function runBlocks(t, file, label) {
  const found = blocks(file, 'js');
  let ran = 0;
  for (const [n, { line, code }] of found.entries()) {
    if (!devDependencies && needsDev(code)) {
      t.diagnostic(`${label}, the js block at line ${line} skipped: it imports a framework and ${noDevDependencies}`);
      continue;
    }
    ran += 1;
    const script = join(tmp, `${label.replace(/\W/g, '-')}-${n}.mjs`);
    writeFileSync(script, code);
    let stdout;
    try {
      stdout = execFileSync(process.execPath, [script], { cwd: tmp, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      assert.fail(`${label}, the js block at line ${line} fails as pasted:\n${err.stderr || err.message}`);
    }
    const printed = [...code.matchAll(/\/\/ prints: (.*)$/gm)].map((m) => m[1]);
    if (printed.length > 0) {
      assert.deepEqual(stdout.replace(/\n$/, '').split('\n'), printed, `${label}, block at line ${line}: the output is not what its "// prints:" comments say:\n${stdout}`);
    }
  }
  t.diagnostic(`${ran} of ${found.length} blocks ran`);
  return found.length;
}

test('every js block of wasm/README.md runs as pasted', (t) => {
  const n = runBlocks(t, join(wasmDir, 'README.md'), 'wasm/README.md');
  assert.ok(n >= 5, `${n} blocks`);
});

test('every js block of README.md runs as pasted', (t) => {
  runBlocks(t, join(root, 'README.md'), 'README.md');
});

test('the module size the README states is the built mempursuit.wasm (within 10 %: release, simd128)', (t) => {
  const text = readFileSync(join(wasmDir, 'README.md'), 'utf8').replace(/\s+/g, ' ');
  const m = /about (\d+) KB, (\d+) KB gzipped/.exec(text);
  assert.ok(m, 'the README states the size as "about N KB, M KB gzipped"');
  const bytes = readFileSync(join(wasmDir, 'mempursuit.wasm'));
  const gzipped = gzipSync(bytes, { level: 9 }).length;
  t.diagnostic(`mempursuit.wasm: ${bytes.length} bytes, ${gzipped} gzipped (zlib level 9); the README says ${m[1]} KB, ${m[2]} KB`);
  const near = (actual, kb) => Math.abs(actual / (Number(kb) * 1000) - 1) <= 0.1;
  assert.ok(near(bytes.length, m[1]), `${bytes.length} bytes vs about ${m[1]} KB`);
  assert.ok(near(gzipped, m[2]), `${gzipped} bytes gzipped vs about ${m[2]} KB`);
});

test('the README lead example is the recommended call', () => {
  const [first] = blocks(join(wasmDir, 'README.md'), 'js');
  assert.match(first.code, /= select\(\s*queryEmbedding,/);
  assert.doesNotMatch(first.code, /method:/, 'the first example uses the default');
  assert.doesNotMatch(readFileSync(join(wasmDir, 'README.md'), 'utf8'), /method: 'centroid', gamma|γ = 0\.5/, 'no advice of a fixed centroid gamma');
});
