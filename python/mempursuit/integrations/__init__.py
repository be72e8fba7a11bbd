"""MemPursuit inside agent frameworks: thin layers over :func:`mempursuit.select`.

Each submodule imports its framework, so import only the one you use; each
needs its extra (``pip install "mempursuit[haystack]"``, ``[llama-index]``,
``[langchain]``, or from a clone ``pip install "./python[haystack]"``):

* :mod:`mempursuit.integrations.haystack` -- ``MemPursuitRanker``, a Haystack
  2.x component to put after an embedding retriever;
* :mod:`mempursuit.integrations.llama_index` -- ``MemPursuitPostprocessor``, a
  LlamaIndex node postprocessor;
* :mod:`mempursuit.integrations.langchain` -- ``MemPursuitCompressor`` (for a
  ``ContextualCompressionRetriever``) and ``mempursuit_search_by_vector``
  (beside ``max_marginal_relevance_search_by_vector``).

What they share:

* The candidate pool is the documents the retriever returned, in that order
  (pool row i = input document i), with the vectors the store already holds:
  no document is embedded again unless its vector cannot be found and an
  embedding model was given for that purpose.
* Every keyword of :func:`mempursuit.select` except ``query``,
  ``candidates``, ``k``, ``relevance`` and ``costs`` is passed through by
  name (``method``, ``gamma``, ``mmr_lambda``, ``cost_budget``, ...), with
  ``select``'s own defaults for whatever is not given: the integrations
  declare no method names, defaults or values of their own, and a name that
  ``select`` does not take is a ``TypeError`` when the integration is built.
* The retriever's scores, where the framework hands them over, are passed
  as ``relevance`` (``use_scores=False`` turns that off).
* A token budget: ``cost=`` (a function of one candidate -- Haystack
  ``Document``, LlamaIndex ``NodeWithScore``, LangChain ``Document`` --
  returning its cost, e.g. its token count) with ``cost_budget=`` (the most
  the returned documents may cost in total). ``cost`` is called once per
  candidate in pool order, before any embedding call, to build ``select``'s
  ``costs``; a pick that no longer fits is skipped and the count budget
  still caps the picks. One without the other is a ``ValueError`` when the
  integration is built.
* The documents come back in pick order as copies (the inputs are not
  modified) whose metadata holds :data:`META_KEYS`: ``mempursuit_rank`` (0 for
  the first pick), ``mempursuit_weight`` (the pick's simplex weight, ``None``
  for methods without weights such as ``"topk"`` and ``"mmr"``),
  ``mempursuit_score`` (the step's score at pick time, ``Selection.steps
  ["score"]``) and, where there are weights, ``mempursuit_residual_sq`` (the
  squared residual of the query after this pick). The document's own score
  field keeps the retriever's score.
* A document that cannot be used (no embedding, a wrong dimension, a
  non-finite element, a cost function that raised for it or gave no finite
  cost >= 0) is a :class:`DocumentError` (a ``ValueError``) naming its
  position in the input and its id.
"""

from ._common import META_KEYS, DocumentError

__all__ = ["META_KEYS", "DocumentError"]
