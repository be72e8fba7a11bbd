// Shared by the framework integrations (mempursuit/ai-sdk,
// mempursuit/langchain): adapters between framework documents and the
// Rust document layer (mempursuit::documents, docs/DOCUMENTS.md), reached
// through selectDocuments, checkDocumentSettings and checkQuery. Every rule
// is the layer's: duplicate ids, score orientation, what is missing, costs
// and budgets, the checks of the settings, the errors (kind, index, id and
// argument as fields) and the result record. This module holds no method
// name, default, valid value or error text of its own to match; it adds
// the integration's name in front of the layer's messages.

import { MemPursuitError, Selector, checkDocumentSettings, checkQuery, initSync, optionKeys, selectDocuments } from '../mempursuit.js';

/** `mmrLambda` -> `mmr_lambda`, the layer's key. */
const canonical = (key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A setting that cannot be used (kind 'option', the layer's word), naming `argument`. */
export const optionError = (message, argument = null, cause) => new MemPursuitError('option', message, { argument, ...(cause === undefined ? {} : { cause }) });

/** Data that cannot be used (kind 'input'), naming the document at `index` where there is one. */
export const inputError = (message, { index = null, id = null, argument = null } = {}, cause) =>
  new MemPursuitError('input', message, { index, id, argument, ...(cause === undefined ? {} : { cause }) });

/** A value in a message: a string quoted, a number (or null, undefined) as it is, anything else by its type. */
export function shown(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  return Array.isArray(value) ? 'an array' : `a value of type ${typeof value}`;
}

/** A document's id as the layer takes it (a string, or null). */
export const idOf = (doc) => (doc != null && typeof doc === 'object' && doc.id != null ? String(doc.id) : null);

/** `document 3 (id "x")`, as the layer names a document. */
const nameOf = (i, id) => (id == null ? `document ${i}` : `document ${i} (id ${JSON.stringify(id)})`);

/** The layer's error `err` as the integration throws it: `owner: message` (then `hint`), its kind, index, id and argument kept. */
export function adapt(owner, err, hint = '') {
  if (!(err instanceof MemPursuitError)) return err;
  return new MemPursuitError(err.code, `${owner}: ${err.message}${hint ? `; ${hint}` : ''}`, { cause: err, index: err.index, id: err.id, argument: err.argument });
}

/**
 * Whether the WebAssembly module is loaded. In Node.js (where
 * `process.getBuiltinModule` exists: Node.js >= 20.16) it is loaded here,
 * synchronously, from the package's own mempursuit.wasm when no init() has
 * run yet, so that the integrations' constructors can check their settings
 * with the library; elsewhere (browsers, bundles without
 * `import.meta.url`) it is loaded only by init().
 */
function moduleLoaded() {
  try {
    new Selector().free(); // throws only when no module is loaded
    return true;
  } catch (err) {
    if (!(err instanceof MemPursuitError)) throw err;
  }
  const fs = globalThis.process?.getBuiltinModule?.('node:fs');
  if (!fs) return false;
  try {
    const url = new URL('../mempursuit.wasm', import.meta.url);
    if (url.protocol !== 'file:') return false;
    initSync(fs.readFileSync(url));
    return true;
  } catch {
    return false; // init() reports it at the first request
  }
}

/**
 * The settings checked once, at construction, by the layer
 * (checkDocumentSettings): the select() `options`, whether scores are
 * passed (`scores`: true, false, or null when that depends on the
 * documents), whether a cost function is given (`cost`), whether the cost
 * budget may still come with each request (`budgetLater`). `ownSettings`
 * are listed after an unknown name. Without a loaded module (see
 * moduleLoaded) the check is left to the first request, where the layer
 * makes it again.
 */
export function checkSettings(owner, options, { scores, cost, budgetLater = false }, ownSettings) {
  if (!moduleLoaded()) return;
  try {
    checkDocumentSettings(options, { scores, cost, budgetLater });
  } catch (err) {
    // A name the layer does not know (an option key it refused, not one of select()'s options).
    const unknown = err instanceof MemPursuitError && err.argument != null && Object.hasOwn(options, err.argument) && !optionKeys().has(canonical(err.argument));
    throw adapt(owner, err, unknown ? `${owner}'s own settings: ${ownSettings.join(', ')}` : '');
  }
}

/** The query embedding checked by the layer before any store or model is asked. */
export function checkQueryOf(owner, query) {
  try {
    return checkQuery(query);
  } catch (err) {
    throw adapt(owner, err);
  }
}

/** The select() options of an integration's settings: every key but the integration's own (`own`). */
export function selectOptions(settings, own) {
  return Object.fromEntries(Object.entries(settings).filter(([key]) => !own.includes(key)));
}

/** A `cost` setting is a function (or undefined). */
export function checkCostFunction(owner, cost) {
  if (cost !== undefined && typeof cost !== 'function') throw optionError(`${owner}: cost must be a function (doc) => number, e.g. its token count`, 'cost');
}

/**
 * `cost(doc)` for each document in order (undefined each without `cost`),
 * as returned: the layer checks the values. A cost function that throws is
 * an input error naming the document (argument 'cost').
 */
export function costsOf(owner, cost, docs) {
  return docs.map((doc, i) => {
    if (cost === undefined) return undefined;
    try {
      return cost(doc);
    } catch (err) {
      const id = idOf(doc);
      throw inputError(`${owner}: ${nameOf(i, id)}: cost(doc) threw: ${err?.message ?? err}`, { index: i, id, argument: 'cost' }, err);
    }
  });
}

/**
 * The layer's selectDocuments on `documents` (`{ id, embedding, score,
 * scoreKind, cost }`): its result, errors adapted (`missingHint` follows
 * the error for a document without an embedding).
 */
export function select(owner, query, documents, k, options, missingHint = '') {
  try {
    return selectDocuments(query, documents, k, options);
  } catch (err) {
    const missing = err instanceof MemPursuitError && err.index != null && err.argument === 'embedding' && documents[err.index]?.embedding == null;
    throw adapt(owner, err, missing ? missingHint : '');
  }
}
