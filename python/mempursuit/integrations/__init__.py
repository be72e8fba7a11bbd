"""MemPursuit inside agent frameworks: thin layers over :func:`mempursuit.select`.

Each submodule imports its framework, so import only the one you use; each
needs its extra (``pip install "mempursuit[haystack]"``, ``[llama-index]``,
``[langchain]``, ``[mem0]``, or from a clone ``pip install "./python[haystack]"``):

* :mod:`mempursuit.integrations.haystack` -- ``MemPursuitRanker``, a Haystack
  2.x component to put after an embedding retriever;
* :mod:`mempursuit.integrations.llama_index` -- ``MemPursuitPostprocessor``, a
  LlamaIndex node postprocessor;
* :mod:`mempursuit.integrations.langchain` -- ``MemPursuitCompressor`` (for a
  ``ContextualCompressionRetriever``) and ``mempursuit_search_by_vector``
  (beside ``max_marginal_relevance_search_by_vector``);
* :mod:`mempursuit.integrations.mem0` -- ``MemPursuitReranker``, a reranker
  for Mem0's ``Memory.search(..., rerank=True)`` (extra ``[mem0]``).

What they share (2026-12-05): each is an adapter between its framework's
documents and the Rust document layer (``mempursuit::documents``,
docs/DOCUMENTS.md), which holds every rule once, for Python and JavaScript
alike:

* The candidate pool is the documents the retriever returned, in that order
  (document i = input document i), with the vectors the store already
  holds: no document is embedded again unless its vector cannot be found
  and an embedding model was given for that purpose.
* **Duplicate ids**: a document whose id an earlier one has is skipped
  (the first occurrence is kept, never returned twice) and reported on the
  logger ``mempursuit.integrations`` (WARNING; the record's
  ``mempursuit_duplicates`` holds the ``[index, first_index]`` pairs).
  Documents without ids are known by their position, never by their text.
* **Scores**: a retriever's score is declared a similarity (higher is
  better) and passed as relevance when every document has one (by rank, any
  scale; ``use_scores=False`` turns that off); a store's distance (FAISS's
  L2, Chroma, PGVector without a relevance function) is never relevance:
  the vectors' cosine with the query is. Scores on some documents only are
  an error.
* Every keyword of :func:`mempursuit.select` except ``query``,
  ``candidates``, ``k``, ``relevance`` and ``costs`` is passed through by
  name (``method``, ``gamma``, ``mmr_lambda``, ``cost_budget``, ...), with
  the library's defaults for whatever is not given: the integrations
  declare no method names, defaults or values of their own. The settings
  are checked once, when the integration is built, by the layer (no dry
  run): an unknown name, a reserved one, a value out of range, a ``cost``
  without ``cost_budget`` or the reverse is an :class:`OptionError`.
* A token budget: ``cost=`` (a function of one candidate -- Haystack
  ``Document``, LlamaIndex ``NodeWithScore``, LangChain ``Document`` --
  returning its cost, e.g. its token count) with ``cost_budget=`` (the most
  the returned documents may cost in total). ``cost`` is called once per
  candidate in pool order, before any embedding call; the layer checks
  the values (finite, >= 0, on every document); a pick that no longer fits
  is skipped and the count budget still caps the picks.
* With the library's default (recommended) method, documents whose vectors
  are bit-identical count once: an exact copy is merged into its first
  occurrence and never picked, so fewer documents than the budget can come
  back. Near-copies of the picks are taken only when nothing else is left,
  so they come last.
* **The result**: the documents come back in pick order as copies (the
  inputs are not modified) whose metadata holds one record under
  :data:`META_KEY` (``"mempursuit"``) with the fields :data:`META_FIELDS`:
  ``rank`` (0 for the first pick), ``weight`` (the pick's simplex weight,
  ``None`` for methods without weights such as top-K and MMR), ``score``
  (the step's score at pick time) and ``residual_sq`` (the squared residual
  of the query after this pick; ``None`` without weights) -- the same keys
  and nesting as the JavaScript integrations' ``metadata.mempursuit``. The
  document's own score field keeps the retriever's score.
* **Async**: Haystack's ``run_async``, LlamaIndex's ``apostprocess_nodes``
  (``aquery``) and LangChain's ``acompress_documents`` await the embedding
  calls and run the same selection code as their sync twins (same result,
  same errors); ``amempursuit_search_by_vector`` runs the store's search and
  the selection in LangChain's executor. Mem0's ``AsyncMemory`` runs the
  reranker in a thread itself.
* **Errors**: every error an integration raises for a bad document, query
  or setting is a :class:`mempursuit.MemPursuitError` (a ``ValueError``)
  whose ``kind`` (``"input"``, ``"option"``, ``"capacity"``), ``index``
  (the document's position), ``id`` and ``argument`` (``"embedding"``,
  ``"score"``, ``"cost"``, ``"query"``, an option's key) are fields set by
  the layer, with a message prefixed by the component's name:

  - a document that cannot be used is a :class:`DocumentError` (kind
    ``"input"``, ``index`` and ``id`` set);
  - a query embedding that cannot be used (not numbers, not finite, all
    zeros, another length than every document's) is a ``MemPursuitError``
    of kind ``"input"`` with ``argument == "query"``;
  - a bad setting is an :class:`OptionError` (kind ``"option"``, also a
    ``TypeError``), raised when the component is built.
"""

from ._common import META_FIELDS, META_KEY, DocumentError, OptionError

__all__ = ["META_FIELDS", "META_KEY", "DocumentError", "OptionError"]
