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
  declare no method names, defaults or values of their own. A name that
  ``select`` does not take is an :class:`OptionError` when the integration
  is built, worded as ``select``'s own (``unknown option 'mmr_lamda'
  (options: method, gamma, ...)``), and so is a value ``select`` rejects
  (prefixed by the component's name).
* The retriever's scores, where the framework hands them over, are passed
  as ``relevance`` (``use_scores=False`` turns that off).
* A token budget: ``cost=`` (a function of one candidate -- Haystack
  ``Document``, LlamaIndex ``NodeWithScore``, LangChain ``Document`` --
  returning its cost, e.g. its token count) with ``cost_budget=`` (the most
  the returned documents may cost in total). ``cost`` is called once per
  candidate in pool order, before any embedding call, to build ``select``'s
  ``costs``; a pick that no longer fits is skipped and the count budget
  still caps the picks. One without the other is an :class:`OptionError`
  when the integration is built.
* With ``select``'s default (recommended) method, documents whose vectors
  are bit-identical count once: an exact copy is merged into its first
  occurrence and never picked, so fewer documents than the budget can come
  back (one, with a stand-in embedding model that gives every text the same
  vector). Near-copies of the picks are taken only when nothing else is
  left, so they come last.
* The documents come back in pick order as copies (the inputs are not
  modified) whose metadata holds :data:`META_KEYS`: ``mempursuit_rank`` (0 for
  the first pick), ``mempursuit_weight`` (the pick's simplex weight, ``None``
  for methods without weights such as ``"topk"`` and ``"mmr"``),
  ``mempursuit_score`` (the step's score at pick time, ``Selection.steps
  ["score"]``) and, where there are weights, ``mempursuit_residual_sq`` (the
  squared residual of the query after this pick). The document's own score
  field keeps the retriever's score.
* Errors: every error an integration raises for a bad document, query or
  setting is a :class:`mempursuit.MemPursuitError` (a ``ValueError``) with
  its ``kind``, the word ``select`` uses:

  - a document that cannot be used (no embedding, a wrong dimension, a
    non-finite element, a score that is not a finite number, a cost
    function that raised for it or gave no finite cost >= 0) is a
    :class:`DocumentError` of kind ``"input"`` naming its position in the
    input and its id (and the value);
  - a query embedding that is not a finite, non-zero vector of numbers, or
    whose dimension differs from the documents' (all of the same
    dimension), is a ``MemPursuitError`` of kind ``"input"`` naming the
    query;
  - a bad setting (an unknown or reserved option name, a value of the
    wrong type or out of range: ``top_k=-1``, ``use_scores="no"``,
    ``gamma=[1]``; ``cost`` without ``cost_budget``) is an
    :class:`OptionError` of kind ``"option"``, also a ``TypeError`` (what
    unknown names and wrong types were before), or ``select``'s own
    ``MemPursuitError`` of kind ``"option"``, prefixed by the component's
    name, raised when the component is built.
"""

from ._common import META_FIELDS, META_KEY, DocumentError, OptionError

__all__ = ["META_FIELDS", "META_KEY", "DocumentError", "OptionError"]
