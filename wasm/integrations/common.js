// Shared by the framework integrations (mempursuit/ai-sdk,
// mempursuit/langchain): their settings checked at construction, the
// embeddings of a list of documents checked against the query's dimension,
// their costs (from the integration's `cost` function), and the selection,
// with errors naming the integration and the document.

import { MemPursuitError, Selector, initSync, select } from '../mempursuit.js';

export const argumentError = (message, cause) => new MemPursuitError('argument', message, cause === undefined ? undefined : { cause });

const isVector = (v) => v != null && typeof v === 'object' && typeof v.length === 'number';

/** A value in a message: a string quoted, a number (or null, undefined) as it is, anything else by its type. */
export function shown(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  return Array.isArray(value) ? 'an array' : `a value of type ${typeof value}`;
}

/** ` (id 'x')` when the document has an id, else nothing. */
export const idOf = (doc) => (doc != null && typeof doc === 'object' && doc.id != null ? ` (id '${String(doc.id)}')` : '');

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
 * The select() options of an integration's settings, checked at
 * construction as select() checks them on each call (unknown names, bad
 * values, options that do not apply to the method, options that exclude
 * each other): a dry select() on an empty pool. `relevance`: whether the
 * integration passes relevance scores (true, false, or null when that
 * depends on the documents: then only an error both with and without them
 * is raised); `costs`: whether it passes costs. `ownSettings` are listed
 * after the options in the message for an unknown name. Throws the
 * MemPursuitError of select(), its message prefixed by `owner`. Without a
 * loaded module (see moduleLoaded) the check is left to the first request.
 */
export function checkSettings(owner, options, { relevance, costs }, ownSettings) {
  if (!moduleLoaded()) return;
  let first = null;
  for (const rel of relevance === null ? [true, false] : [relevance]) {
    try {
      select([1], [], 0, { ...options, ...(rel ? { relevance: [] } : {}), ...(costs ? { costs: [] } : {}) });
      return;
    } catch (err) {
      if (!(err instanceof MemPursuitError)) throw err;
      first ??= err;
    }
  }
  const own = first.message.startsWith('unknown option ') ? `; its own settings: ${ownSettings.join(', ')}` : '';
  throw new MemPursuitError(first.code, `${owner}: ${first.message}${own}`, { cause: first });
}

/**
 * `vectors` (one per document, or undefined where a document has none)
 * checked against the query dimension `d`; `name(i)` names document i
 * (`document 3 (id 'x')`) in messages, `owner` the integration. When no
 * document has the query's dimension and all have the same one, the query
 * is the odd one out and the message says so.
 */
export function checkVectors(owner, vectors, d, name) {
  vectors.forEach((v, i) => {
    if (!isVector(v)) throw argumentError(`${owner}: ${name(i)} has no embedding (an array of ${d} numbers)`);
  });
  const n0 = vectors.length > 0 ? vectors[0].length : d;
  if (n0 !== d && vectors.every((v) => v.length === n0)) {
    throw argumentError(
      `${owner}: the query embedding has ${d} values but the documents' embeddings have ${n0}; embed documents and queries with the same model`,
    );
  }
  const i = vectors.findIndex((v) => v.length !== d);
  if (i >= 0) {
    throw argumentError(
      `${owner}: ${name(i)}: its embedding has ${vectors[i].length} values but the query embedding has ${d}; embed documents and queries with the same model`,
    );
  }
}

/**
 * select() on the documents' vectors, its errors prefixed by `owner`; an
 * error about candidate i names document i (`name(i)`), one about the
 * query names the query embedding.
 */
export function selectDocuments(owner, q, vectors, k, options, name) {
  try {
    return select(q, vectors, k, options);
  } catch (err) {
    if (!(err instanceof MemPursuitError)) throw err;
    const candidate = /^candidate (\d+): /.exec(err.message);
    const where = candidate
      ? `${name(Number(candidate[1]))}: its embedding: ${err.message.slice(candidate[0].length)}`
      : err.message.startsWith('query: ')
        ? `the query embedding: ${err.message.slice('query: '.length)}`
        : err.message;
    throw new MemPursuitError(err.code, `${owner}: ${where}`, { cause: err });
  }
}

/**
 * Each document's retriever score (`key(doc)` is the document's value,
 * `what` names where it comes from, e.g. "metadata 's' (scoreKey)"): a
 * finite number, or an error naming the document.
 */
export function scoresOf(owner, docs, value, what, name) {
  return docs.map((doc, i) => {
    const s = value(doc);
    if (typeof s !== 'number') throw argumentError(`${owner}: ${name(i)} has no numeric ${what}: got ${shown(s)}`);
    if (!Number.isFinite(s)) throw argumentError(`${owner}: ${name(i)}: its ${what} is ${s}; a retriever score must be a finite number`);
    return s;
  });
}

/**
 * The select options of an integration's settings: every key but the
 * integration's own (`own`, which includes `cost`). `costs` and `relevance` are
 * filled by the integration (from `cost(doc)` and the `scoreSetting` field of
 * each document): given as a setting, either is an error
 * (`owner` names the integration).
 */
export function selectOptions(settings, own, owner, scoreSetting) {
  if (Object.hasOwn(settings, 'costs')) {
    throw argumentError(`${owner}: 'costs' is filled by the integration, one per document: pass cost: (doc) => number (e.g. its token count) with costBudget`);
  }
  if (Object.hasOwn(settings, 'relevance')) {
    throw argumentError(
      `${owner}: 'relevance' is filled by the integration, one per document: name the documents' retriever score with ${scoreSetting} instead`,
    );
  }
  return Object.fromEntries(Object.entries(settings).filter(([key]) => !own.includes(key)));
}

/** Whether the options set a cost budget. */
const hasBudget = (options) => options.costBudget !== undefined && options.costBudget !== null;

/**
 * A `cost` function and a `costBudget` option go together, as `costs` and
 * `costBudget` do in select(): one without the other is an error, as is a
 * `cost` that is not a function. `budgetLater`: the budget may still come
 * with each request (then only a budget without a cost is an error).
 */
export function checkCost(owner, cost, options, budgetLater = false) {
  if (cost !== undefined && typeof cost !== 'function') throw argumentError(`${owner}: cost must be a function (doc) => number, e.g. its token count`);
  const budget = hasBudget(options);
  if (cost !== undefined && !budget && !budgetLater) {
    throw argumentError(`${owner}: cost needs costBudget (the most the selected documents may cost in total, in the units of cost, e.g. tokens)`);
  }
  if (cost === undefined && budget) {
    throw argumentError(`${owner}: costBudget needs cost: (doc) => number (each document's cost, e.g. its token count)`);
  }
  return cost !== undefined && budget;
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
      throw argumentError(`${describe(i)}: cost(doc) returned ${shown(c)}; a cost must be a finite number >= 0 (e.g. the document's token count)`);
    }
    return c;
  });
}

export { isVector };
