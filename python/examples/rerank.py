"""Rerank the pool a vector store returned with MemPursuit and keep the top
memories for the prompt.

Runs on the repository's HotpotQA mini fixture (cli/data/hotpotqa-mini: 24
multi-hop questions, 1,022 sentence memories, all-MiniLM-L6-v2 embeddings,
d = 384; CC BY-SA 4.0, see its README.md). Each question's "vector store
result" is its pool (all sentences of its 10 paragraphs).

1. Scores every question's selection at K = 3, 5, 10 against the gold
   evidence and prints the same table rows as `mempursuit demo` (evidence
   recall, complete coverage, group coverage, in percent; overall and per
   question type). The rows of each method the demo shows equal the
   demo's (named by the specification's text form): with no `--method`,
   the library's default (the recommended setting, the demo's
   `recommended` row); `--method pursuit` (paper mode), `topk`, `mmr`.
2. Builds the prompt context for one question (the first where the kept
   memories cover both gold paragraphs and the nearest neighbours do not;
   with the default, the demo's worked example): the K = 5 memories the
   method keeps, next to the 5 nearest neighbours.

    python python/examples/rerank.py [--fixture cli/data/hotpotqa-mini]
        [--method recommended|pursuit|centroid|topk|mmr] [--gamma G] [--k 5]
"""

import argparse
import json
import pathlib

import numpy as np

import mempursuit

REPO = pathlib.Path(__file__).resolve().parents[2]


def display_name(method, gamma):
    """The method's name in `mempursuit demo`'s table: the text form of its
    specification (`pursuit`, `mmr`, `centroid,gamma=0.3`); None is the
    library's default, the recommended setting."""
    if method is None:
        return "recommended"
    return method if gamma is None else f"{method},gamma={gamma:g}"


def load(folder):
    """The fixture: memory embeddings (N, d) float32, query embeddings
    (Q, d) float32, memory texts, query specs (text, type, pool, gold,
    gold_groups)."""
    memories = np.load(folder / "memories.f32.npy")
    queries = np.load(folder / "queries.f32.npy")
    with open(folder / "memories.jsonl") as f:
        texts = [json.loads(line)["text"] for line in f if line.strip()]
    with open(folder / "queries.jsonl") as f:
        specs = [json.loads(line) for line in f if line.strip()]
    return memories, queries, texts, specs


def rerank(selector, query, pool_ids, memories, k, **options):
    """The memory ids to keep, in pick order: `pool_ids` is what the vector
    store returned (memory ids, its order), `memories[pool_ids]` their
    embeddings (P, d) float32, passed to the selector without a copy."""
    pool = memories[pool_ids]
    sel = selector.select(query, pool, k, **options)
    return pool_ids[sel.picks]


def score(spec, picked):
    """(evidence recall, all gold picked, every gold group represented)."""
    picked = set(int(i) for i in picked)
    gold = spec["gold"]
    hits = sum(g in picked for g in gold)
    groups = all(any(i in picked for i in g) for g in spec["gold_groups"])
    return hits / max(len(gold), 1), hits == len(gold), groups


def table_rows(name, specs, picks, ks):
    """`mempursuit demo`'s table rows for one method: per K (picks[K][i]:
    the memory ids picked for query i), recall / complete / groups in
    percent, over all queries and per query type."""
    types = sorted({s["type"] for s in specs})
    rows = []
    for k in ks:
        cells = []
        for subset in [None] + types:
            n = recall = complete = groups = 0
            for spec, p in zip(specs, picks[k]):
                if subset is not None and spec["type"] != subset:
                    continue
                r, c, g = score(spec, p)
                n, recall, complete, groups = n + 1, recall + r, complete + c, groups + g
            n = max(n, 1)
            cells += [100 * recall / n, 100 * complete / n, 100 * groups / n]
        rows.append(f"{name:<13} {k:>3} " + "".join(f"{c:>9.1f}" for c in cells))
    return types, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixture", type=pathlib.Path, default=REPO / "cli" / "data" / "hotpotqa-mini")
    ap.add_argument(
        "--method", default=None, choices=mempursuit.METHODS, help="default: the library's (recommended)"
    )
    ap.add_argument("--gamma", type=float, default=None, help="pursuit / centroid only")
    ap.add_argument("--k", type=int, default=5, help="memories kept for the prompt")
    args = ap.parse_args()
    # Only the options the user gave: the library supplies every default.
    options = {key: value for key, value in [("method", args.method), ("gamma", args.gamma)] if value is not None}
    name = display_name(args.method, args.gamma)

    memories, queries, texts, specs = load(args.fixture)
    ks = [3, 5, 10]

    # 1. All questions at once: select_batch runs the pairs on native
    # threads with the GIL released. One run per K (the recommended
    # setting's gamma depends on K, so its picks are not nested).
    pool_ids = [np.asarray(s["pool"]) for s in specs]
    pools = [memories[ids] for ids in pool_ids]
    picks = {}
    for k in ks:
        results = mempursuit.select_batch(queries, pools, k, **options)
        picks[k] = [ids[r.picks] for ids, r in zip(pool_ids, results)]
    types, rows = table_rows(name, specs, picks, ks)
    counts = {t: sum(s["type"] == t for s in specs) for t in types}
    print(f"{len(specs)} questions ({', '.join(f'{counts[t]} {t}' for t in types)}), K = {ks}")
    print(f"{'method':<13} {'K':>3} " + "".join(f"{h:>9}" for h in ["recall", "complete", "groups"] * (1 + len(types))))
    print("\n".join(rows))
    print("columns: all queries, then " + ", ".join(types) + "; in percent")

    # 2. One question: the prompt context. A Selector keeps its buffers
    # between calls (use one per thread in a server).
    selector = mempursuit.Selector()
    # The first question where the kept memories cover both gold paragraphs
    # and the nearest neighbours do not (as in `mempursuit demo`).
    top = mempursuit.select_batch(queries, pools, args.k, method="topk")
    mine = mempursuit.select_batch(queries, pools, args.k, **options)
    i = next(
        (
            j
            for j, s in enumerate(specs)
            if score(s, pool_ids[j][mine[j].picks])[2] and not score(s, pool_ids[j][top[j].picks])[2]
        ),
        0,
    )
    spec, ids = specs[i], pool_ids[i]
    kept = rerank(selector, queries[i], ids, memories, args.k, **options)
    nearest = rerank(selector, queries[i], ids, memories, args.k, method="topk")
    gold = set(spec["gold"])
    print(f"\nQuestion: {spec['text']}")
    print(f"nearest {args.k} by cosine ({sum(int(m) in gold for m in nearest)} gold):")
    for m in nearest:
        print(f"  {'*' if int(m) in gold else ' '} [{m:>4}] {texts[m][:90]}")
    print(f"{name} keeps ({sum(int(m) in gold for m in kept)} gold; '*' = gold evidence):")
    for m in kept:
        print(f"  {'*' if int(m) in gold else ' '} [{m:>4}] {texts[m][:90]}")
    prompt = "Context:\n" + "\n".join(f"- {texts[m]}" for m in kept) + f"\n\nQuestion: {spec['text']}\nAnswer:"
    print(f"\nPrompt ({len(prompt)} characters):\n{prompt}")


if __name__ == "__main__":
    main()
