"""Reading the vectors a LangChain vector store holds, by document id, so
that nothing is embedded again (not public API). Each reader uses the
store's own layout, read from its source (langchain-core 1.8,
langchain-community 0.4, langchain-chroma 1.1):

- ``InMemoryVectorStore``: ``store.store[id]["vector"]``;
- ``FAISS`` (langchain-community): ``store.index.reconstruct(position)``
  with the position from ``store.index_to_docstore_id`` (the vector FAISS
  holds: unit length when the store was built with ``normalize_L2=True``);
- ``Chroma`` (langchain-chroma): ``store.get(ids=..., include=["embeddings"])``.

Any other store gives None for every id (the integration then embeds the
documents again when it was given ``embeddings=``, or names the first one
in its error).
"""

from typing import Any, Dict, List, Mapping, Optional, Sequence


def held_vectors(store: Any, ids: Sequence[Optional[str]]) -> List[Optional[Any]]:
    """The vector ``store`` holds for each of ``ids`` (None where it holds
    none, the id is None, or the store's layout is not one of the module's)."""
    wanted = [i for i in ids if i is not None]
    if store is None or not wanted:
        return [None] * len(ids)
    found: Dict[str, Any] = {}
    table = getattr(store, "store", None)
    index = getattr(store, "index", None)
    positions = getattr(store, "index_to_docstore_id", None)
    if isinstance(table, Mapping):
        for i in wanted:
            entry = table.get(i)
            if isinstance(entry, Mapping) and entry.get("vector") is not None:
                found[i] = entry["vector"]
    elif hasattr(index, "reconstruct") and isinstance(positions, Mapping):
        position = {doc_id: pos for pos, doc_id in positions.items()}
        for i in wanted:
            if i in position:
                found[i] = index.reconstruct(int(position[i]))
    elif hasattr(store, "_collection") and callable(getattr(store, "get", None)):
        got = store.get(ids=list(dict.fromkeys(wanted)), include=["embeddings"])
        embeddings = got.get("embeddings")
        if embeddings is not None:
            found = {str(i): v for i, v in zip(got.get("ids", []), embeddings)}
    return [found.get(i) if i is not None else None for i in ids]
