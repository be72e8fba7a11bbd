#!/usr/bin/env python3
"""Numba + OpenBLAS lazy MemPursuit, the outside reference of issue 20.

An independent implementation of the pursuit in paper mode (residual
alignment, simplex-constrained least-squares refit with ridge 1e-10, fixed
budget K), written the way a careful Numba user would: per pick, the Gram
row of the newest pick is ONE OpenBLAS SGEMV (``np.dot(X, x)`` on the
float32 C-contiguous P x d candidate matrix, inside the ``@njit`` loop;
Numba's ``np.dot`` on float32 calls BLAS sgemv through SciPy's OpenBLAS),
the query similarity b = X q is one more SGEMV, the scores are
b - G[:, S] w (the residual's correlation with each candidate, as the
repository's core computes them), the pick is their argmax over the
unpicked candidates (ties to the lowest index), and the weights w are refit
on the simplex over the picks by a primal active-set method on the K x K
Gram of the picks (warm-started from the previous weights, each step an
equality-constrained solve by Cholesky), all in float64 except the SGEMVs.

It times this pursuit on random unit vectors (32 pools of P x d cycled,
fixed seed; NumPy's PCG64, not the Rust CLI's StdRng, so the pools differ
from ``mempursuit bench``'s, which is fine for timing ratios) and, if the
``mempursuit`` Python package is importable, ``mempursuit.select(...,
method="pursuit")`` on the same pools in the same process, the two
interleaved round by round (alternating which goes first), and prints
microseconds per query (median and minimum over the rounds) and the ratio
mempursuit / Numba. Each round also times the Numba side's K + 1 SGEMVs
alone (the same passes, nothing else: its BLAS floor). Before timing it
checks that both make the same picks on the pools. Pools are unit vectors
already: the Numba side does not normalize them, mempursuit.select does
(its cosine input policy; one pass it shares with the query similarities).

OpenBLAS is pinned to one thread: OPENBLAS_NUM_THREADS=1 (and the other
BLAS thread variables) are set below before NumPy is imported.

Usage (the package built with its default release profile, i.e. with LTO):

    python3 -m venv venv && venv/bin/pip install numpy scipy numba
    venv/bin/pip install ./python
    venv/bin/python benches/numba_pursuit.py -p 200 -k 20 -d 1536 --rounds 20
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

RIDGE = 1e-10  # the paper mode's ridge (PursuitOptions::PAPER_RIDGE)


@njit(cache=False, fastmath=False)
def _solve_free(gss, bs, free, nf, ridge, w_out):
    """Minimizer of 1/2 w'(G+ridge I)w - b'w subject to sum(w) = 1 over
    the free set (first nf entries of `free`), by Cholesky: w = x + mu y
    with x = A^-1 b, y = A^-1 1, mu = (1 - sum x) / sum y. Writes w_out
    (indexed like gss) for the free entries; returns mu (the multiplier,
    G w - b = mu on the free set)."""
    a = np.empty((nf, nf))
    for r in range(nf):
        for c in range(nf):
            a[r, c] = gss[free[r], free[c]]
        a[r, r] += ridge
    # Cholesky in place (lower).
    for j in range(nf):
        s = a[j, j]
        for m in range(j):
            s -= a[j, m] * a[j, m]
        if s <= 0.0:
            s = 1e-300
        a[j, j] = np.sqrt(s)
        for r in range(j + 1, nf):
            s2 = a[r, j]
            for m in range(j):
                s2 -= a[r, m] * a[j, m]
            a[r, j] = s2 / a[j, j]
    rhs = np.empty((nf, 2))
    for r in range(nf):
        rhs[r, 0] = bs[free[r]]
        rhs[r, 1] = 1.0
    for col in range(2):
        for r in range(nf):  # forward
            s = rhs[r, col]
            for m in range(r):
                s -= a[r, m] * rhs[m, col]
            rhs[r, col] = s / a[r, r]
        for r in range(nf - 1, -1, -1):  # backward
            s = rhs[r, col]
            for m in range(r + 1, nf):
                s -= a[m, r] * rhs[m, col]
            rhs[r, col] = s / a[r, r]
    sx = 0.0
    sy = 0.0
    for r in range(nf):
        sx += rhs[r, 0]
        sy += rhs[r, 1]
    mu = (1.0 - sx) / sy
    for r in range(nf):
        w_out[free[r]] = rhs[r, 0] + mu * rhs[r, 1]
    return mu


@njit(cache=False)
def _refit(gss, bs, t, w, ridge):
    """Primal active-set refit of w (length t, feasible on the simplex on
    entry, the newest pick at 0) to argmin over the simplex of
    1/2 w'(G_SS + ridge I)w - b_S'w."""
    free = np.empty(t, np.int64)
    nf = 0
    for i in range(t):
        if w[i] > 0.0:
            free[nf] = i
            nf += 1
    trial = np.zeros(t)
    for _ in range(4 * t + 10):
        for i in range(t):
            trial[i] = 0.0
        mu = _solve_free(gss, bs, free, nf, ridge, trial)
        # Step toward the equality solution, blocked by the first weight
        # that would cross zero.
        step = 1.0
        block = -1
        for r in range(nf):
            i = free[r]
            if trial[i] < 0.0:
                s = w[i] / (w[i] - trial[i])
                if s < step:
                    step = s
                    block = r
        if block >= 0:
            for r in range(nf):
                i = free[r]
                w[i] += step * (trial[i] - w[i])
            w[free[block]] = 0.0
            # Drop every free weight at (or below) zero.
            nn = 0
            for r in range(nf):
                i = free[r]
                if w[i] > 0.0:
                    free[nn] = i
                    nn += 1
                else:
                    w[i] = 0.0
            nf = nn
            continue
        for r in range(nf):
            w[free[r]] = trial[free[r]]
        # KKT: (G w - b)_i >= mu for the weights at zero; add the worst.
        worst = -1
        worst_v = -1e-12
        for i in range(t):
            if w[i] == 0.0:
                isfree = False
                for r in range(nf):
                    if free[r] == i:
                        isfree = True
                if isfree:
                    continue
                g = -bs[i]
                for m in range(t):
                    g += (gss[i, m] + (ridge if m == i else 0.0)) * w[m]
                v = g - mu
                if v < worst_v:
                    worst_v = v
                    worst = i
        if worst < 0:
            return
        free[nf] = worst
        nf += 1


@njit(cache=False)
def numba_pursuit(x, q, k):
    """Paper-mode MemPursuit on x (P x d float32, unit rows) and q (d
    float32, unit): returns the picks (K int64) in entry order and their
    final weights."""
    p = x.shape[0]
    k = min(k, p)
    b32 = np.dot(x, q)  # one SGEMV: the query similarities
    b = b32.astype(np.float64)
    gcols = np.empty((k, p))  # Gram rows of the picks
    picks = np.empty(k, np.int64)
    picked = np.zeros(p, np.bool_)
    w = np.zeros(k)
    gss = np.empty((k, k))
    bs = np.empty(k)
    scores = b.copy()
    for t in range(k):
        best = -1
        best_v = -np.inf
        for i in range(p):
            if not picked[i] and scores[i] > best_v:
                best_v = scores[i]
                best = i
        picks[t] = best
        picked[best] = True
        row = np.dot(x, x[best])  # one SGEMV: the Gram row of the pick
        for i in range(p):
            gcols[t, i] = row[i]
        for m in range(t + 1):
            gss[t, m] = gcols[m, picks[t]]
            gss[m, t] = gss[t, m]
        bs[t] = b[best]
        if t == 0:
            w[0] = 1.0
        else:
            w[t] = 0.0
            _refit(gss, bs, t + 1, w, RIDGE)
        # Scores: b - G[:, S] w over the candidates.
        for i in range(p):
            scores[i] = b[i]
        for m in range(t + 1):
            wm = w[m]
            if wm != 0.0:
                for i in range(p):
                    scores[i] -= wm * gcols[m, i]
    return picks, w[:k].copy()


@njit(cache=False)
def sgemv_passes(x, q, k):
    """The same K + 1 SGEMVs as `numba_pursuit` (query, then rows 0..K-1
    instead of the picks) and nothing else: the Numba side's BLAS floor."""
    s = np.dot(x, q)[0]
    for t in range(min(k, x.shape[0])):
        s += np.dot(x, x[t])[0]
    return s


def random_pools(n, p, d, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        q = rng.standard_normal(d).astype(np.float32)
        q /= np.linalg.norm(q)
        x = rng.standard_normal((p, d)).astype(np.float32)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        out.append((np.ascontiguousarray(q), np.ascontiguousarray(x)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-p", "--pool", type=int, default=200)
    ap.add_argument("-k", "--budget", type=int, default=20)
    ap.add_argument("-d", "--dim", type=int, default=1536)
    ap.add_argument("--queries", type=int, default=32, help="pools cycled per round")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-mempursuit", action="store_true", help="time the Numba side only")
    args = ap.parse_args()

    pools = random_pools(args.queries, args.pool, args.dim, args.seed)
    k = args.budget
    numba_pursuit(pools[0][1], pools[0][0], k)  # compile
    sgemv_passes(pools[0][1], pools[0][0], k)

    mp = None
    if not args.no_mempursuit:
        try:
            import mempursuit as mp
        except ImportError:
            print("mempursuit not importable: timing the Numba side only")

    print(
        f"P = {args.pool}, K = {k}, d = {args.dim}, {args.queries} pools cycled "
        f"(NumPy PCG64 seed {args.seed}), {args.rounds} timed rounds, "
        f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}"
    )

    if mp is not None:
        same = 0
        for q, x in pools:
            ours, _ = numba_pursuit(x, q, k)
            theirs = list(mp.select(q, x, k, method="pursuit").picks)
            if list(ours) == theirs:
                same += 1
            else:
                first = next(i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b)
                print(f"  picks differ from step {first}: numba {list(ours)} mempursuit {theirs}")
        print(f"picks identical to mempursuit.select(method='pursuit') on {same} / {len(pools)} pools")

    def run_numba():
        t0 = time.perf_counter()
        for q, x in pools:
            numba_pursuit(x, q, k)
        return (time.perf_counter() - t0) / len(pools)

    def run_floor():
        t0 = time.perf_counter()
        for q, x in pools:
            sgemv_passes(x, q, k)
        return (time.perf_counter() - t0) / len(pools)

    def run_mp():
        t0 = time.perf_counter()
        for q, x in pools:
            mp.select(q, x, k, method="pursuit")
        return (time.perf_counter() - t0) / len(pools)

    nb, ms, fl = [], [], []
    for r in range(args.rounds + 1):  # round 0 warms up, untimed
        f = run_floor()
        if mp is None:
            a = run_numba()
        elif r % 2 == 0:
            a, c = run_numba(), run_mp()
        else:
            c, a = run_mp(), run_numba()
        if r:
            fl.append(f)
            nb.append(a)
            if mp is not None:
                ms.append(c)

    def fmt(v):
        return f"median {statistics.median(v) * 1e6:8.1f} µs, min {min(v) * 1e6:8.1f} µs per query"

    print(f"numba + OpenBLAS sgemv pursuit:   {fmt(nb)}")
    print(f"its K + 1 SGEMVs alone:           {fmt(fl)}")
    if mp is not None:
        print(f"mempursuit.select(pursuit):       {fmt(ms)}")
        print(
            f"ratio mempursuit / numba: medians {statistics.median(ms) / statistics.median(nb):.3f}, "
            f"minima {min(ms) / min(nb):.3f}"
        )
        print(
            f"ratio mempursuit / numba's SGEMVs alone: medians "
            f"{statistics.median(ms) / statistics.median(fl):.3f}, minima {min(ms) / min(fl):.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
