// Shared by the framework integrations (mempursuit/ai-sdk,
// mempursuit/langchain): the embeddings of a list of documents, checked
// against the query's dimension, and their costs (from the integration's
// `cost` function), with errors naming the document.

import { MemPursuitError } from '../mempursuit.js';

export const argumentError = (message, cause) => new MemPursuitError('argument', message, cause === undefined ? undefined : { cause });

const isVector = (v) => v != null && typeof v === 'object' && typeof v.length === 'number';

/**
 * `vectors` (one per document, or undefined where a document has none)
 * checked against the query dimension `d`; `describe(i)` names document i
 * in messages.
 */
export function checkVectors(vectors, d, describe) {
  vectors.forEach((v, i) => {
    if (!isVector(v)) throw argumentError(`${describe(i)} has no embedding (an array of ${d} numbers)`);
    if (v.length !== d) {
      throw argumentError(`${describe(i)}: its embedding has ${v.length} values but the query embedding has ${d}; embed documents and queries with the same model`);
    }
  });
}

/**
 * The selector options of an integration's settings: every key but the
 * integration's own (`own`, which includes `cost`). `costs` is filled by
 * the integration from `cost(doc)`: given as a setting it is an error
 * (`owner` names the integration).
 */
export function selectOptions(settings, own, owner) {
  if (Object.hasOwn(settings, 'costs')) {
    throw argumentError(`${owner}: 'costs' is filled by the integration, one per document: pass cost: (doc) => number (e.g. its token count) with costBudget`);
  }
  return Object.fromEntries(Object.entries(settings).filter(([key]) => !own.includes(key)));
}

/**
 * A `cost` function and a `costBudget` option go together, as `costs` and
 * `costBudget` do in select(): one without the other is an error, as is a
 * `cost` that is not a function.
 */
export function checkCost(owner, cost, options) {
  if (cost !== undefined && typeof cost !== 'function') throw argumentError(`${owner}: cost must be a function (doc) => number, e.g. its token count`);
  const budget = options.costBudget !== undefined && options.costBudget !== null;
  if (cost !== undefined && !budget) {
    throw argumentError(`${owner}: cost needs costBudget (the most the selected documents may cost in total, in the units of cost, e.g. tokens)`);
  }
  if (cost === undefined && budget) {
    throw argumentError(`${owner}: costBudget needs cost: (doc) => number (each document's cost, e.g. its token count)`);
  }
}

/**
 * `cost(doc)` for each document in order (undefined without `cost`), each
 * a finite number >= 0; `describe(i)` names document i in the error for a
 * cost function that throws or returns anything else.
 */
export function costsOf(cost, docs, describe) {
  if (cost === undefined) return undefined;
  return docs.map((doc, i) => {
    let c;
    try {
      c = cost(doc);
    } catch (err) {
      throw argumentError(`${describe(i)}: cost(doc) threw: ${err?.message ?? err}`, err);
    }
    if (typeof c !== 'number' || !Number.isFinite(c) || c < 0) {
      const shown = typeof c === 'number' || c == null ? String(c) : typeof c === 'string' ? JSON.stringify(c) : `a value of type ${typeof c}`;
      throw argumentError(`${describe(i)}: cost(doc) returned ${shown}; a cost must be a finite number >= 0 (e.g. the document's token count)`);
    }
    return c;
  });
}

/** ` (id 'x')` when the document has an id, else nothing. */
export const idOf = (doc) => (doc != null && typeof doc === 'object' && doc.id != null ? ` (id '${String(doc.id)}')` : '');

export { isVector };
