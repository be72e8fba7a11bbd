"""The document layer's conformance cases (tests/conformance/documents.json,
the file the Rust test tests/tests/documents_conformance.rs and
wasm/test/documents.test.mjs run) through ``mempursuit._mempursuit``:
``prepare_documents`` (kept indices, duplicates, relevance and its source,
costs), ``select_documents`` (the picks with their ``mempursuit`` metadata
record, numbers to 1e-6, duplicates, stop reason) and
``check_document_settings``; error cases raise ``MemPursuitError`` with the
case's ``kind``, ``index``, ``id`` and ``argument`` as attributes (no
message parsed)."""

import json
import pathlib
import pickle

import pytest

import mempursuit
from mempursuit._mempursuit import (
    METADATA_FIELDS,
    METADATA_KEY,
    check_document_settings,
    prepare_documents,
    select_documents,
)

REPO = pathlib.Path(__file__).resolve().parents[2]
CASES = json.loads((REPO / "tests" / "conformance" / "documents.json").read_text())["cases"]
SCORES = {"yes": True, "no": False, "depends": None}


def run(case):
    if "select" in case:
        return select_documents(case["query"], case["documents"], case["select"]["k"], case["select"]["options"])
    if "settings" in case:
        s = case["settings"]
        return check_document_settings(s["options"], SCORES[s["scores"]], s["cost"], s["budget_later"])
    return prepare_documents(case["query"], case["documents"])


def same(got, want):
    """Equal, numbers to 1e-6 (ints exactly)."""
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(want, float):
        return isinstance(got, float) and abs(got - want) < 1e-6
    return type(got) is type(want) and got == want


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_documents_conformance(case):
    if "error" in case:
        with pytest.raises(mempursuit.MemPursuitError) as info:
            run(case)
        e, want = info.value, case["error"]
        assert (e.kind, e.index, e.id, e.argument) == (want["kind"], want["index"], want["id"], want["argument"])
        return
    got = run(case)
    want = case.get("expect")
    if "settings" in case:
        assert got is None and case["ok"]
    elif "select" in case:
        got = {key: got[key] for key in ("picks", "duplicates", "stop_reason")}
        assert same(got, want), got
    else:
        assert got["kept"] == want["kept"]
        assert got["duplicates"] == want["duplicates"]
        assert got["relevance_source"] == want["relevance_source"]
        assert got["relevance"] == pytest.approx(want["relevance"], abs=1e-6)
        assert got["costs"] == want.get("costs")
        assert len(got["candidates"]) == len(want["kept"])


def test_the_result_record_is_the_layers():
    assert METADATA_KEY == "mempursuit"
    assert METADATA_FIELDS == ("rank", "weight", "score", "residual_sq")
    picks = select_documents([1.0, 0.0], [{"embedding": [1.0, 0.0]}, {"embedding": [0.6, 0.8]}], 2)["picks"]
    assert [list(p["metadata"][METADATA_KEY]) for p in picks] == [list(METADATA_FIELDS)] * 2


def test_error_fields_survive_pickle():
    with pytest.raises(mempursuit.MemPursuitError) as info:
        prepare_documents([1.0], [{"id": "a", "embedding": "[1,"}])
    e = pickle.loads(pickle.dumps(info.value))
    assert (e.kind, e.index, e.id, e.argument) == ("input", 0, "a", "embedding")
    assert 'document 0 (id "a")' in str(e)


def test_unknown_score_kind_is_an_option_error():
    with pytest.raises(mempursuit.MemPursuitError) as info:
        prepare_documents([1.0], [{"embedding": [1.0], "score": 0.1, "score_kind": "l2"}])
    assert (info.value.kind, info.value.index, info.value.argument) == ("option", 0, "score_kind")
