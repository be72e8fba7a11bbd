"""MemPursuit: pick the K memories that compose the query.

From a query embedding and a pool of P candidate memory embeddings (the pool a
vector store returned), MemPursuit (Feng & Fan, *Recall What Is Missing*, 2026)
picks K memories one at a time: each pick is the candidate best aligned with
the residual of a sparse convex reconstruction of the query from the memories
already picked, and all weights are refit on the simplex after each pick. A
paraphrase of a fact already picked scores low; the missing fact scores high.

* :func:`select` -- one query and its pool, a :class:`Selection` back (by
  default the recommended setting; ``method="pursuit"`` is the paper's
  method);
* :class:`Selector` -- the same, reusing its buffers across calls;
* :func:`select_batch` -- many (query, pool) pairs on native threads, with
  the GIL released (ragged pools also as one matrix and ``offsets``);
* :class:`Store` -- memory embeddings validated and kept once, each query
  naming its pool by the retriever's ids (``store.select(query, ids, k)``:
  the picks of ``select`` on ``rows[ids]``, as positions in ``ids``).

:mod:`mempursuit.arrow` (the ``arrow`` extra, pyarrow) runs ``select_batch``
on Arrow columns without copying the embeddings, the unit of Ray Data's
``map_batches``; :mod:`mempursuit.integrations` holds the framework
integrations. Neither is imported by ``import mempursuit``.

The three take the same keyword options (:data:`OPTIONS`, from the Rust
crate's one specification of a call; :data:`METHODS` are the method names).
Errors the library reports are :class:`MemPursuitError` (a ``ValueError``
with ``kind`` ``"input"``, ``"option"`` or ``"capacity"``; the last also a
``MemoryError``, :class:`CapacityError`); an argument of the wrong type is a
``TypeError`` naming it.

Shapes: ``query`` (d,), ``candidates`` (P, d) row-major (row i = pool index
i). float32 (and float16) C-contiguous arrays are used without copying and
never modified; other real dtypes are converted once (see :func:`select`). All
similarities are cosines. The compiled part is ``mempursuit._mempursuit``
(Rust, PyO3); its type stubs are ``_mempursuit.pyi``.
"""

from ._errors import CapacityError, MemPursuitError
from ._mempursuit import (
    METHODS,
    OPTIONS,
    STEP_FIELDS,
    Selection,
    Selector,
    Store,
    __version__,
    select,
    select_batch,
)

__all__ = [
    "METHODS",
    "OPTIONS",
    "STEP_FIELDS",
    "CapacityError",
    "MemPursuitError",
    "Selection",
    "Selector",
    "Store",
    "__version__",
    "select",
    "select_batch",
]
