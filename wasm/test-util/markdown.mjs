// The fenced code blocks of a Markdown file (for test/readme.test.mjs and
// test/package.test.mjs; outside test/, which `node --test test/` runs whole).

import { readFileSync } from 'node:fs';

/** The fenced blocks of `lang` (```lang ... ```) in `file`, with their first line numbers. */
export function blocks(file, lang) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '```' + lang) {
      const start = i + 1;
      let end = start;
      while (end < lines.length && lines[end].trim() !== '```') end++;
      out.push({ line: start + 1, code: lines.slice(start, end).join('\n') });
      i = end;
    }
  }
  return out;
}
