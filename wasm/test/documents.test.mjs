// The document layer's conformance cases (tests/conformance/documents.json,
// the same file the Rust tests and pytest run): prepareDocuments (kept
// indices, duplicates, relevance source and values to 1e-6, costs),
// selectDocuments (the picks with their `mempursuit` metadata record,
// numbers to 1e-6, duplicates, stop reason) and checkDocumentSettings, or
// the error's kind, index, id and argument as structured fields.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, prepareDocuments, selectDocuments, checkDocumentSettings, METADATA_KEY, METADATA_FIELDS, MemPursuitError } from 'mempursuit';

await init();
const { cases } = JSON.parse(readFileSync(new URL('../../tests/conformance/documents.json', import.meta.url), 'utf8'));
const SCORES = { yes: true, no: false, depends: null };

test('documents conformance: the file has its cases', () => assert.equal(cases.length, 26));

function run(c) {
  if (c.select) return selectDocuments(c.query, c.documents, c.select.k, c.select.options);
  if (c.settings) {
    const s = c.settings;
    return checkDocumentSettings(s.options, { scores: SCORES[s.scores], cost: s.cost, budgetLater: s.budget_later });
  }
  return prepareDocuments(c.query, c.documents);
}

/** Equal, numbers to 1e-6 (the keys and nesting exactly). */
function same(got, want, at = '') {
  if (typeof want === 'number') return assert.ok(typeof got === 'number' && Math.abs(got - want) <= 1e-6, `${at}: ${got} vs ${want}`);
  if (want === null || typeof want !== 'object') return assert.equal(got, want, at);
  assert.deepEqual([...Object.keys(got)].sort(), [...Object.keys(want)].sort(), at);
  for (const k of Object.keys(want)) same(got[k], want[k], `${at}.${k}`);
}

for (const c of cases) {
  test(`documents conformance: ${c.name}`, () => {
    if (c.error) {
      assert.throws(
        () => run(c),
        (err) => {
          assert.ok(err instanceof MemPursuitError, String(err));
          assert.deepEqual([err.kind, err.index, err.id, err.argument], [c.error.kind, c.error.index, c.error.id, c.error.argument], err.message);
          return true;
        },
      );
      return;
    }
    const got = run(c);
    const x = c.expect;
    if (c.settings) return assert.equal(got, undefined);
    if (c.select) return same({ picks: got.picks, duplicates: got.duplicates, stop_reason: got.stop_reason }, x, c.name);
    assert.deepEqual(got.kept, x.kept);
    assert.deepEqual(got.duplicates, x.duplicates);
    assert.equal(got.relevance_source, x.relevance_source);
    got.relevance.forEach((r, i) => assert.ok(Math.abs(r - x.relevance[i]) <= 1e-6, `relevance[${i}] = ${r}, expected ${x.relevance[i]}`));
    assert.deepEqual(got.costs, x.costs ?? null);
    assert.equal(got.candidates.length, x.kept.length);
  });
}

test('documents: the result record is the layer\'s (the same key and fields as Python)', () => {
  const { picks } = selectDocuments([1, 0], [{ embedding: [1, 0] }, { embedding: [0.6, 0.8] }], 2);
  assert.deepEqual(picks.map((p) => Object.keys(p.metadata)), [[METADATA_KEY], [METADATA_KEY]]);
  assert.deepEqual(picks.map((p) => Object.keys(p.metadata[METADATA_KEY])), [METADATA_FIELDS, METADATA_FIELDS].map((f) => [...f]));
});

test('documents: nothing the caller gave is modified; a distance is never the relevance', () => {
  const docs = [
    { id: 'near', embedding: [1, 0], score: 0.0, scoreKind: 'distance' },
    { id: 'far', embedding: [0, 1], score: 1.4, scoreKind: 'distance' },
  ];
  const before = JSON.stringify(docs);
  const got = prepareDocuments([1, 0], docs);
  assert.equal(JSON.stringify(docs), before);
  assert.deepEqual(got.relevance, [1, 0], 'the nearer document is the more relevant');
  assert.throws(() => prepareDocuments([1, 0], [{ embedding: [1, 0], scoreKind: 'closeness' }]), (err) => err.kind === 'option' && err.argument === 'score_kind' && err.index === 0);
});
