// Shared by the framework integrations (mempursuit/ai-sdk,
// mempursuit/langchain): the embeddings of a list of documents, checked
// against the query's dimension, with errors naming the document.

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

/** The selector options of an integration's settings: every key but the integration's own. */
export function selectOptions(settings, own) {
  return Object.fromEntries(Object.entries(settings).filter(([key]) => !own.includes(key)));
}

export { isVector };
