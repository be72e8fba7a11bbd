// The npm package as users get it: `npm pack` makes a tarball with exactly
// the package's files, it installs into an empty project without network
// access, `import ... from 'mempursuit'` works there, and the TypeScript
// declarations type-check a strict usage file (test/usage.ts) against the
// installed package, with the tsconfig.json of the package README, when
// TypeScript is installed (`npm ci` in wasm/; MEMPURSUIT_REQUIRE_DEV=1 makes
// its absence a failure, as in CI).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blocks } from '../test-util/markdown.mjs';
import { linkDevDependencies } from '../test-util/project.mjs';

const wasmDir = fileURLToPath(new URL('../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(wasmDir, 'package.json'), 'utf8'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const tmp = mkdtempSync(join(tmpdir(), 'mempursuit-npm-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const project = join(tmp, 'project');

test('npm pack: a tarball with exactly the package files', () => {
  const [info] = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', tmp], wasmDir));
  assert.equal(info.filename, `mempursuit-${manifest.version}.tgz`);
  assert.deepEqual(info.files.map((f) => f.path).sort(), [
    'README.md',
    'integrations/ai-sdk.d.ts',
    'integrations/ai-sdk.js',
    'integrations/common.js',
    'integrations/langchain.d.ts',
    'integrations/langchain.js',
    'mempursuit.d.ts',
    'mempursuit.js',
    'mempursuit.wasm',
    'package.json',
  ]);
  const wasm = info.files.find((f) => f.path === 'mempursuit.wasm');
  assert.equal(wasm.size, readFileSync(join(wasmDir, 'mempursuit.wasm')).length);
});

test('the tarball installs into an empty project offline, and its import works', () => {
  const tarball = join(tmp, `mempursuit-${manifest.version}.tgz`);
  assert.ok(existsSync(tarball), 'npm pack ran');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'smoke', private: true, type: 'module' }));
  run(npm, ['install', '--offline', '--no-audit', '--no-fund', tarball], project);
  const installed = JSON.parse(readFileSync(join(project, 'node_modules/mempursuit/package.json'), 'utf8'));
  assert.equal(installed.version, manifest.version);
  writeFileSync(
    join(project, 'smoke.mjs'),
    `import { init, select, Selector, MemPursuitError } from 'mempursuit';
await init();
const s = Math.SQRT1_2;
const pool = [[0.995, 0.0998], [0.9998, 0.02], [0, 1]];
const picks = Array.from(select([s, s], pool, 2).picks);
let message = '';
try { new Selector().select([NaN, 1], pool, 1); } catch (e) { if (e instanceof MemPursuitError) message = e.code + ' ' + e.message; }
console.log(JSON.stringify({ picks, message }));
`,
  );
  const out = JSON.parse(run(process.execPath, ['smoke.mjs'], project));
  assert.deepEqual(out, { picks: [0, 2], message: 'input query: element 0 is not finite (NaN)' });
  // The AI SDK integration needs nothing else; the LangChain one needs its
  // optional peer dependency, and says so.
  const subpaths = `const a = await import('mempursuit/ai-sdk');
let langchain = 'loaded';
try { await import('mempursuit/langchain'); } catch (e) { langchain = e.code + ' ' + e.message.includes('@langchain/core'); }
console.log(JSON.stringify({ reranker: typeof a.mempursuitReranker, langchain }));`;
  writeFileSync(join(project, 'subpaths.mjs'), subpaths);
  assert.deepEqual(JSON.parse(run(process.execPath, ['subpaths.mjs'], project)), { reranker: 'function', langchain: 'ERR_MODULE_NOT_FOUND true' });
});

const tsc = join(wasmDir, 'node_modules/typescript/bin/tsc');
const haveTsc = existsSync(tsc);
test(
  'the declarations type-check strict usage files against the installed package (and the frameworks)',
  { skip: !haveTsc && !process.env.MEMPURSUIT_REQUIRE_DEV && 'TypeScript not installed (run npm ci in wasm/)' },
  () => {
    assert.ok(haveTsc, 'MEMPURSUIT_REQUIRE_DEV is set but wasm/node_modules/typescript is missing: run npm ci in wasm/');
    assert.ok(existsSync(join(project, 'node_modules/mempursuit')), 'the tarball is installed');
    copyFileSync(fileURLToPath(new URL('usage.ts', import.meta.url)), join(project, 'usage.ts'));
    // The tsconfig.json the package README gives, with the usage file and
    // unused-locals checks added.
    const [readme] = blocks(join(wasmDir, 'README.md'), 'json');
    const config = JSON.parse(readme.code);
    config.compilerOptions.noEmit = true;
    config.compilerOptions.noUnusedLocals = true;
    config.files = ['usage.ts'];
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(config));
    try {
      run(process.execPath, [tsc, '-p', project], project);
    } catch (err) {
      assert.fail(`tsc --noEmit failed:\n${err.stdout}${err.stderr}`);
    }
    // The integrations, with the frameworks (wasm/'s dev dependencies) beside the package.
    linkDevDependencies(project);
    copyFileSync(fileURLToPath(new URL('usage-integrations.ts', import.meta.url)), join(project, 'usage-integrations.ts'));
    // skipLibCheck: the frameworks' own declarations need @types/node and
    // lib esnext; the usage file is checked against all declarations.
    config.files = ['usage-integrations.ts'];
    config.compilerOptions.skipLibCheck = true;
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(config));
    try {
      run(process.execPath, [tsc, '-p', project], project);
    } catch (err) {
      assert.fail(`tsc --noEmit (integrations) failed:\n${err.stdout}${err.stderr}`);
    }
    // The README's framework examples, pasted into TypeScript files (.mts:
    // ES modules with top-level await), type-check with that tsconfig and
    // `skipLibCheck`, the README's advice: no implicit any, and the
    // embeddings stand-in is an EmbeddingsInterface (new-user trial of 2026-12-02, item 11).
    const examples = blocks(join(wasmDir, 'README.md'), 'js').filter((b) => /from 'mempursuit\/(ai-sdk|langchain)'/.test(b.code));
    assert.ok(examples.length >= 3, `${examples.length} framework examples`);
    config.files = examples.map((b) => `readme-${b.line}.mts`);
    examples.forEach((b) => writeFileSync(join(project, `readme-${b.line}.mts`), b.code));
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(config));
    try {
      run(process.execPath, [tsc, '-p', project], project);
    } catch (err) {
      assert.fail(`tsc --noEmit (the README's framework examples, readme-LINE.mts) failed:\n${err.stdout}${err.stderr}`);
    }
  },
);

/** A copy of the package's files without mempursuit.wasm (a clone before `bash wasm/build.sh`). */
function unbuilt(name) {
  const dir = join(tmp, name);
  for (const file of [...manifest.files, 'package.json', 'check-module.cjs'].filter((f) => f !== 'mempursuit.wasm')) {
    cpSync(join(wasmDir, file), join(dir, file), { recursive: true });
  }
  return dir;
}

test('npm pack without the built module: one line saying to run bash wasm/build.sh, no stack (issue 30, item 8)', () => {
  const dir = unbuilt('unbuilt-pack');
  let failure;
  try {
    run(npm, ['pack', '--dry-run'], dir);
  } catch (err) {
    failure = err;
  }
  assert.ok(failure, 'npm pack fails without mempursuit.wasm');
  assert.match(failure.stderr, /^mempursuit\.wasm is missing: build it first with bash wasm\/build\.sh \(from the repository root\) or npm run build$/m);
  assert.doesNotMatch(failure.stderr, /^\s+at |accessSync|ENOENT/m, failure.stderr);
});

test("init()'s missing-module error says to run bash wasm/build.sh (issue 30, item 8)", () => {
  const dir = unbuilt('unbuilt-init');
  writeFileSync(
    join(dir, 'missing.mjs'),
    `import { init } from './mempursuit.js';
try { await init(); console.log('loaded'); } catch (err) { console.log(err.code + ': ' + err.message); }
`,
  );
  const out = run(process.execPath, [join(dir, 'missing.mjs')], dir);
  assert.match(out, /^argument: init\(\): cannot load the WebAssembly module from file:.*\/mempursuit\.wasm: .*ENOENT.*; in a clone of the repository, build it first with `bash wasm\/build\.sh`\n$/);
});
