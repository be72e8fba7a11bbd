// The document layer's conformance cases (tests/conformance/documents.json,
// the same file the Rust tests and pytest run) through prepareDocuments:
// kept indices, duplicates, relevance source and values (to 1e-6), costs,
// or the error's kind, index, id and argument as structured fields.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, prepareDocuments, MemPursuitError } from 'mempursuit';

await init();
const { cases } = JSON.parse(readFileSync(new URL('../../tests/conformance/documents.json', import.meta.url), 'utf8'));

test('documents conformance: the file has its cases', () => assert.ok(cases.length >= 8));

for (const c of cases) {
  test(`documents conformance: ${c.name}`, () => {
    if (c.error) {
      assert.throws(
        () => prepareDocuments(c.query, c.documents),
        (err) => {
          assert.ok(err instanceof MemPursuitError, `${err?.name}: ${err?.message}`);
          assert.deepEqual({ kind: err.kind, index: err.index, id: err.id, argument: err.argument }, c.error);
          assert.equal(err.code, c.error.kind);
          return true;
        },
      );
      return;
    }
    const got = prepareDocuments(c.query, c.documents);
    const x = c.expect;
    assert.deepEqual(got.kept, x.kept);
    assert.deepEqual(got.duplicates, x.duplicates);
    assert.equal(got.relevance_source, x.relevance_source);
    assert.equal(got.relevance.length, x.relevance.length);
    got.relevance.forEach((r, i) => assert.ok(Math.abs(r - x.relevance[i]) <= 1e-6, `relevance[${i}] = ${r}, expected ${x.relevance[i]}`));
    assert.deepEqual(got.costs, x.costs ?? null);
    assert.equal(got.candidates.length, x.kept.length);
  });
}

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
