// A project folder with the package installed as users get it (its
// package.json "files"), for the tests that run code against the package
// from outside wasm/ (bundle.test.mjs, readme.test.mjs, package.test.mjs).

import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const wasmDir = fileURLToPath(new URL('../', import.meta.url));
export const manifest = JSON.parse(readFileSync(join(wasmDir, 'package.json'), 'utf8'));

/** Copies the package's files into `project`/node_modules/mempursuit. */
export function installPackage(project) {
  const installed = join(project, 'node_modules', 'mempursuit');
  mkdirSync(installed, { recursive: true });
  for (const file of [...manifest.files, 'package.json']) {
    cpSync(join(wasmDir, file), join(installed, file), { recursive: true });
  }
  return installed;
}

/**
 * Links the packages installed in wasm/node_modules (the dev dependencies:
 * `ai`, `@langchain/core` and what they need) into `project`/node_modules,
 * beside what is there, so that code in the project can import them.
 * Returns false, linking nothing, when wasm/node_modules is missing (no
 * `npm ci` in wasm/): the callers skip what needs them, with that reason.
 */
export function linkDevDependencies(project) {
  const from = join(wasmDir, 'node_modules');
  if (!existsSync(from)) return false;
  const to = join(project, 'node_modules');
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    if (name.startsWith('.') || name === 'mempursuit') continue;
    const scoped = name.startsWith('@');
    for (const entry of scoped ? readdirSync(join(from, name)).map((n) => `${name}/${n}`) : [name]) {
      const target = join(to, entry);
      if (existsSync(target) || isLink(target)) continue;
      mkdirSync(join(target, '..'), { recursive: true });
      symlinkSync(join(from, entry), target, 'dir');
    }
  }
  return true;
}

/** The reason given where the dev dependencies are missing. */
export const noDevDependencies = 'wasm/node_modules is missing (run npm ci in wasm/)';

function isLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
