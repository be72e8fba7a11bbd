"""The document layer's conformance cases (tests/conformance/documents.json,
the file the Rust test tests/tests/documents_conformance.rs runs) through
``mempursuit._mempursuit.prepare_documents``: kept indices, duplicates,
relevance and its source, costs exactly (relevance to 1e-6); error cases
raise ``MemPursuitError`` with the case's ``kind``, ``index``, ``id`` and
``argument`` as attributes (no message parsed)."""

import json
import pathlib
import pickle

import pytest

import mempursuit
from mempursuit._mempursuit import prepare_documents

REPO = pathlib.Path(__file__).resolve().parents[2]
CASES = json.loads((REPO / "tests" / "conformance" / "documents.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_documents_conformance(case):
    if "error" in case:
        with pytest.raises(mempursuit.MemPursuitError) as info:
            prepare_documents(case["query"], case["documents"])
        e, want = info.value, case["error"]
        assert (e.kind, e.index, e.id, e.argument) == (want["kind"], want["index"], want["id"], want["argument"])
        return
    got = prepare_documents(case["query"], case["documents"])
    want = case["expect"]
    assert got["kept"] == want["kept"]
    assert got["duplicates"] == want["duplicates"]
    assert got["relevance_source"] == want["relevance_source"]
    assert got["relevance"] == pytest.approx(want["relevance"], abs=1e-6)
    assert got["costs"] == want.get("costs")
    assert len(got["candidates"]) == len(want["kept"])


def test_error_fields_survive_pickle():
    with pytest.raises(mempursuit.MemPursuitError) as info:
        prepare_documents([1.0], [{"id": "a", "embedding": "[1,"}])
    e = pickle.loads(pickle.dumps(info.value))
    assert (e.kind, e.index, e.id, e.argument) == ("input", 0, "a", "embedding")
    assert 'document 0 (id "a")' in str(e)


def test_unknown_score_kind_is_an_option_error():
    with pytest.raises(mempursuit.MemPursuitError) as info:
        prepare_documents([1.0], [{"embedding": [1.0], "score": 0.1, "score_kind": "l2"}])
    assert (info.value.kind, info.value.argument) == ("option", "score_kind")
