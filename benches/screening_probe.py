#!/usr/bin/env python3
"""Rows read by an exact screened paper-mode pursuit (issue 20's probe).

Counts, on the HotpotQA store pools (each query's 200 nearest memories of
the whole store, as ``mempursuit bench --store-pool 200`` builds them), how
many candidate rows a screened pursuit must read under each family of
rigorous bounds: the drift bound of ``Screening`` (simple, and split along
the query as the crate's design does), a per-store basis (the top-m
eigenvectors of the store's X^T X, with per-memory coordinates y_j = V x_j
and tail norms e_j; m = 16, 32, 64, 128) with and without the query pass,
and the pool's own PCA basis (not free: it costs a pass). Reading is
simulated best bound first until the next bound is below the best exact
score. Totals are fractions of the unscreened pursuit's P(K + 1) rows, with
and without the rows of the residual direction (|F| per step) and the new
pick's Gram entries with the earlier picks; the basis bounds' own cost is
reported in row equivalents (m/d of a row per candidate evaluated).

float64 throughout, bounds WITHOUT rounding margins: a probe of what such
bounds could save, not a proof; it checks that no bound fell below its
exact score and that every simulated argmax is the pursuit's pick. If the
``mempursuit`` package is importable it also checks that its own float64
paper-mode pursuit makes the package's picks.

Usage (numpy; about 4 minutes on 2 cores for 340 queries x 2 encoders):

    python3 benches/screening_probe.py --data ../shared/data [--queries 340] [--out FILE]
"""
import argparse
import json
import sys
import time

import numpy as np

DATA = "../shared/data"
SETS = {"MiniLM": "hotpotqa-distractor", "E5": "hotpotqa-distractor-e5"}
P = 200
KMAX = 50
KS = (20, 50)
LAM = 1e-10  # paper mode ridge (DESIGN.md s1, s3; package default)
MS = (16, 32, 64, 128)
POOL_MS = (16, 32)
REPORT_STEPS = (1, 2, 5, 10, 20, 50)  # pick number (1 = first pick)


# ---------------------------------------------------------------------------
# paper-mode pursuit, float64
# ---------------------------------------------------------------------------
def eq_solve(H, b):
    """min 1/2 a'Ha - b'a s.t. 1'a = 1 (no sign constraint). Returns a, nu."""
    n = len(b)
    K = np.zeros((n + 1, n + 1))
    K[:n, :n] = H
    K[:n, n] = 1.0
    K[n, :n] = 1.0
    rhs = np.concatenate([b, [1.0]])
    sol = np.linalg.solve(K, rhs)
    return sol[:n], sol[n]


def refit(G, bS, alpha0, tol=1e-13):
    """Primal active set for min 1/2 a'(G+lam I)a - bS'a on the simplex,
    warm start alpha0 (feasible). Returns alpha, nu, kkt residual."""
    n = len(bS)
    H = G + LAM * np.eye(n)
    alpha = alpha0.copy()
    if n == 1:
        alpha = np.ones(1)
    free = [i for i in range(n) if alpha[i] > 0]
    for _ in range(10 * n + 50):
        aF, nu = eq_solve(H[np.ix_(free, free)], bS[free])
        if np.all(aF >= 0):
            alpha = np.zeros(n)
            alpha[free] = aF
            U = bS - H @ alpha
            out = [i for i in range(n) if i not in free]
            if out:
                viol = U[out] - nu
                k = int(np.argmax(viol))
                if viol[k] > tol:
                    free.append(out[k])
                    continue
            break
        # step toward aF, drop the blocking coordinate
        cur = alpha[free]
        neg = aF < 0
        ratios = np.full(len(free), np.inf)
        ratios[neg] = cur[neg] / (cur[neg] - aF[neg])
        k = int(np.argmin(ratios))
        tau = ratios[k]
        alpha_new = np.zeros(n)
        alpha_new[free] = cur + tau * (aF - cur)
        alpha_new[free[k]] = 0.0
        alpha_new = np.maximum(alpha_new, 0.0)
        alpha = alpha_new
        free.pop(k)
    U = bS - H @ alpha
    F = alpha > 0
    nu = U[F].mean()
    kkt = max(np.max(np.abs(U[F] - nu)), max(0.0, np.max(U[~F] - nu)) if (~F).any() else 0.0)
    kkt = max(kkt, abs(alpha.sum() - 1.0), max(0.0, -alpha.min()))
    return alpha, nu, kkt


def pursuit(X, q, K):
    """Paper-mode pursuit. Returns picks, R (K x d: residual before pick n+1,
    R[0] = q), alphas (list: weights over S after refit n), kkt max."""
    Pn = X.shape[0]
    b = X @ q
    picks = []
    R = np.zeros((K, X.shape[1]))
    r = q.copy()
    alpha = np.zeros(0)
    alphas = []
    kkt_max = 0.0
    avail = np.ones(Pn, bool)
    for n in range(K):
        R[n] = r
        s = X @ r
        s[~avail] = -np.inf
        j = int(np.argmax(s))  # ties: lowest index
        picks.append(j)
        avail[j] = False
        XS = X[picks]
        G = XS @ XS.T
        alpha, nu, kkt = refit(G, b[picks], np.concatenate([alpha, [0.0]]))
        kkt_max = max(kkt_max, kkt)
        alphas.append(alpha.copy())
        r = q - XS.T @ alpha
    return picks, R, alphas, kkt_max


# ---------------------------------------------------------------------------
# screening simulation
# ---------------------------------------------------------------------------
def best_first_reads(ub, ex):
    """Read candidates in decreasing bound order until the next bound is
    below the best exact score read so far. ub, ex: arrays over the
    available candidates. Returns the indices read (into ub)."""
    order = np.argsort(-ub, kind="stable")
    ubs = ub[order]
    exs = ex[order]
    best = np.maximum.accumulate(exs)
    # read i (0-based) iff i == 0 or ubs[i] >= best[i-1]
    stop = np.nonzero(ubs[1:] < best[:-1])[0]
    nread = (stop[0] + 1) if len(stop) else len(ub)
    return order[:nread]


class Frame:
    """Precomputed per-query quantities for bounds with a basis V (m x d),
    possibly m = 0 (then only the query direction is used)."""

    def __init__(self, X, q, R, V):
        self.m = 0 if V is None else V.shape[0]
        d = X.shape[1]
        if V is None:
            V = np.zeros((0, d))
        Y = X @ V.T  # P x m  (stored per memory)
        e2 = np.maximum(1.0 - (Y * Y).sum(1), 0.0)  # ||x||=1
        Vq = V @ q
        qp = q - V.T @ Vq
        nqp = np.linalg.norm(qp)
        u = qp / nqp  # q's direction outside span V
        t = X @ u  # = (b - y.Vq)/||q_perp||: known once b_j is known
        VR = R @ V.T  # K x m
        uR = R @ u  # K
        self.YR = Y @ VR.T  # P x K   y_j . V r_n
        self.tR = np.outer(t, uR)  # P x K   t_j * (u . r_n)
        self.e = np.sqrt(e2)
        self.ep = np.sqrt(np.maximum(e2 - t * t, 0.0))  # tail outside span(V, u)
        RR = R @ R.T
        VV = VR @ VR.T
        self.RR, self.VV, self.uR = RR, VV, uR

    def _dn2(self, n, n0):
        """||dr||^2, ||V dr||^2, (u.dr) for dr = r_n - r_n0 (n0 array)."""
        RR, VV = self.RR, self.VV
        dn2 = RR[n, n] - 2 * RR[n, n0] + RR[n0, n0]
        dv2 = VV[n, n] - 2 * VV[n, n0] + VV[n0, n0]
        du = self.uR[n] - self.uR[n0]
        return np.maximum(dn2, 0.0), np.maximum(dv2, 0.0), du

    def basis_unread(self, n, idx):
        """y.Vr + e ||r - V'Vr||, b_j unknown."""
        r2 = self.RR[n, n]
        v2 = self.VV[n, n]
        return self.YR[idx, n] + self.e[idx] * np.sqrt(max(r2 - v2, 0.0))

    def basis_known(self, n, idx):
        """y.Vr + t (u.r) + e' ||r outside span(V,u)||, b_j known."""
        r2 = self.RR[n, n]
        v2 = self.VV[n, n]
        ur = self.uR[n]
        tail = np.sqrt(max(r2 - v2 - ur * ur, 0.0))
        return self.YR[idx, n] + self.tR[idx, n] + self.ep[idx] * tail

    def drift_known(self, n, idx, n0, s0):
        """s_j(n0) + y.V dr + t (u.dr) + e' ||dr outside span(V,u)||."""
        dn2, dv2, du = self._dn2(n, n0)
        tail = np.sqrt(np.maximum(dn2 - dv2 - du * du, 0.0))
        ydr = self.YR[idx, n] - self.YR[idx, n0]
        tdr = self.tR[idx, n] - self.tR[idx, n0]
        return s0 + ydr + tdr + self.ep[idx] * tail


def simulate(S_exact, picks, K, frame, qpass, simple=False, frame0=None):
    """S_exact: K x P exact scores x_j . r_n. Returns per-step candidate
    reads (length K; entry n = reads to find pick n+1), and counters of
    bound violations / argmax mismatches.
    qpass: all rows read at step 0 (b and s_j(0) exact).
    simple: drift bound s_j(n0) + ||dr|| only (variant a1).
    frame0: the m=0 frame (query direction only) for the q-split drift,
    used in addition to `frame` (min of both)."""
    Pn = S_exact.shape[1]
    anchor = np.full(Pn, -1)  # step of last read, -1 = never read
    avail = np.ones(Pn, bool)
    reads = np.zeros(K, int)
    viol = 0
    mism = 0
    evals = np.zeros(K, int)  # rows whose basis bound a lazy sweep must evaluate
    cb_val = np.full(Pn, np.inf)  # last full bound (or exact score) and its step
    cb_step = np.zeros(Pn, int)
    RR = frame0.RR
    if qpass:
        anchor[:] = 0
        cb_val = S_exact[0].copy()
    for n in range(K):
        idx = np.nonzero(avail)[0]
        ex = S_exact[n, idx]
        if qpass and n == 0:
            reads[n] = 0  # the query pass (counted separately) gives b exactly
            j = idx[int(np.argmax(ex))]
        else:
            a = anchor[idx]
            ub = np.full(len(idx), np.inf)
            kn = a >= 0
            un = ~kn
            if un.any():
                ub[un] = frame.basis_unread(n, idx[un])
            if kn.any():
                ik = idx[kn]
                n0 = a[kn]
                s0 = S_exact[n0, ik]
                if simple:
                    dn2, _, _ = frame0._dn2(n, n0)
                    ubk = s0 + np.sqrt(dn2)
                else:
                    ubk = frame0.drift_known(n, ik, n0, s0)
                    if frame is not frame0:
                        ubk = np.minimum(ubk, frame.drift_known(n, ik, n0, s0))
                        ubk = np.minimum(ubk, frame.basis_known(n, ik))
                ub[kn] = ubk
            viol += int(np.sum(ub < ex - 1e-9))
            # lazy basis sweep: a row needs its basis bound only when its
            # cheap bound (last full bound + ||dr|| since, or the q-split
            # drift for rows with known b) reaches the step's best score
            if frame.m > 0:
                c0 = cb_step[idx]
                cheap = cb_val[idx] + np.sqrt(np.maximum(RR[n, n] - 2 * RR[n, c0] + RR[c0, c0], 0.0))
                if kn.any():
                    cheap[kn] = np.minimum(cheap[kn], frame0.drift_known(n, idx[kn], a[kn], S_exact[a[kn], idx[kn]]))
                need = cheap >= ex.max()
                evals[n] = int(need.sum())
                cb_val[idx[need]] = ub[need]
                cb_step[idx[need]] = n
            rd = best_first_reads(ub, ex)
            reads[n] = len(rd)
            anchor[idx[rd]] = n
            cb_val[idx[rd]] = ex[rd]
            cb_step[idx[rd]] = n
            exr = ex[rd]
            best = exr.max()
            # ties: lowest index among the read with the best score
            j = int(idx[rd][exr == best].min())
        if j != picks[n]:
            mism += 1
        avail[picks[n]] = False
    return reads, viol, mism, evals


# ---------------------------------------------------------------------------
def load(name):
    d = f"{DATA}/{SETS[name]}"
    M32 = np.load(f"{d}/memories.f32.npy")
    Q32 = np.load(f"{d}/queries.f32.npy")
    return M32, Q32


def unit(A):
    A = A.astype(np.float64)
    return A / np.linalg.norm(A, axis=-1, keepdims=True)


def main():
    nq = ARGS.queries
    try:
        import mempursuit
    except ImportError:
        mempursuit = None
    results = {}
    for name in SETS:
        M32, Q32 = load(name)
        M = unit(M32)
        Q = unit(Q32)
        N = M.shape[0]
        info = {"N": N, "d": M.shape[1], "queries": min(nq, Q.shape[0])}
        # store basis: top eigenvectors of X'X (uncentred), f64
        t0 = time.perf_counter()
        C = M.T @ M
        t1 = time.perf_counter()
        w, U = np.linalg.eigh(C)
        t2 = time.perf_counter()
        order = np.argsort(-w)
        U = U[:, order]
        info["build_gram_s"] = t1 - t0
        info["build_eigh_s"] = t2 - t1
        Vs = {m: U[:, :m].T.copy() for m in MS}
        info["energy"] = {m: float(((M @ Vs[m].T) ** 2).sum(1).mean()) for m in MS}
        # f32 variant of the build time (what a store would do)
        t0 = time.perf_counter()
        C32 = M32.T @ M32
        np.linalg.eigh(C32.astype(np.float64))
        info["build_f32gram_plus_eigh_s"] = time.perf_counter() - t0

        cos = Q[:nq] @ M.T
        rows = []
        agree = {"same": 0, "first_diff": [], "kkt_max": 0.0}
        for qi in range(info["queries"]):
            pool_ids = np.argsort(-cos[qi], kind="stable")[:P]
            X = M[pool_ids]
            q = Q[qi]
            picks, R, alphas, kkt = pursuit(X, q, KMAX)
            agree["kkt_max"] = max(agree["kkt_max"], kkt)
            if mempursuit is not None:
                sel = mempursuit.select(
                    np.ascontiguousarray(Q32[qi]),
                    np.ascontiguousarray(M32[pool_ids]),
                    KMAX,
                    method="pursuit",
                )
                pk = [int(x) for x in sel.picks]
                if pk == picks:
                    agree["same"] += 1
                else:
                    fd = next(i for i in range(KMAX) if pk[i] != picks[i])
                    agree["first_diff"].append((qi, fd + 1))
            S_exact = R @ X.T  # K x P
            # free-set sizes |F| at each screened step n >= 1 (after refit n)
            Fsz = np.array([0] + [int((alphas[n - 1] > 0).sum()) for n in range(1, KMAX)])
            rec = {"F": Fsz}
            f0 = Frame(X, q, R, None)
            rec["a1_drift_simple"] = simulate(S_exact, picks, KMAX, f0, True, simple=True, frame0=f0)
            rec["a2_drift_qsplit"] = simulate(S_exact, picks, KMAX, f0, True, frame0=f0)
            for m in MS:
                fm = Frame(X, q, R, Vs[m])
                rec[f"b_store_m{m}"] = simulate(S_exact, picks, KMAX, fm, False, frame0=f0)
                rec[f"c_store_m{m}_qpass"] = simulate(S_exact, picks, KMAX, fm, True, frame0=f0)
            for m in POOL_MS:
                w_, U_ = np.linalg.eigh(X.T @ X)
                Vp = U_[:, np.argsort(-w_)[:m]].T
                fp = Frame(X, q, R, Vp)
                rec[f"p_pool_m{m}"] = simulate(S_exact, picks, KMAX, fp, False, frame0=f0)
            rows.append(rec)
            if qi % 50 == 0:
                print(name, qi, flush=True)
        results[name] = (info, agree, rows)
    return results


def summarize(results):
    out = []
    for name, (info, agree, rows) in results.items():
        nq = len(rows)
        out.append(f"### {name}: N = {info['N']}, d = {info['d']}, queries = {nq}")
        out.append(
            f"basis build: X'X (f64) {info['build_gram_s']:.3f} s, eigh(d x d) {info['build_eigh_s']:.3f} s;"
            f" f32 X'X + f64 eigh {info['build_f32gram_plus_eigh_s']:.3f} s"
        )
        out.append(
            "energy captured (mean ||y_j||^2 over the store): "
            + ", ".join(f"m={m}: {v:.3f}" for m, v in info["energy"].items())
        )
        nd = len(agree["first_diff"])
        out.append(
            f"agreement with mempursuit.select(method='pursuit') at K = {KMAX}: {agree['same']}/{nq} identical;"
            f" differing (query, first differing pick): {agree['first_diff'][:20]}; max KKT residual {agree['kkt_max']:.2e}"
        )
        variants = [k for k in rows[0] if k != "F"]
        for K in KS:
            denom = P * (K + 1)
            out.append("")
            out.append(f"K = {K} (denominator P(K+1) = {denom})")
            out.append(
                "| variant | query pass | cand. reads | qpass+cand | + |F| rows (w) | + pick entries | pick-1 reads | basis sweep all rows (row-eq.) | basis sweep lazy (row-eq.) | bound viol. | argmax mism. |"
            )
            out.append("|---|---|---|---|---|---|---|---|---|---|---|")
            Fsum = np.mean([r["F"][:K].sum() for r in rows])
            entries = K * (K - 1) / 2
            for v in variants:
                qp = P if (v.startswith("a") or v.startswith("c")) else 0
                m = 0 if v.startswith("a") else int(v.split("_m")[1].split("_")[0])
                cand = np.mean([r[v][0][:K].sum() for r in rows])
                step1 = np.mean([r[v][0][0] for r in rows])
                viol = sum(r[v][1] for r in rows)
                mism = sum(r[v][2] for r in rows)
                lazy = np.mean([r[v][3][:K].sum() for r in rows]) * m / info["d"]
                # every available row, every step that evaluates bounds
                first = 1 if qp else 0
                allrows = sum(P - n for n in range(first, K)) * m / info["d"]
                tot0 = (qp + cand) / denom
                tot1 = (qp + cand + Fsum) / denom
                tot2 = (qp + cand + Fsum + entries) / denom
                out.append(
                    f"| {v} | {qp / denom:.3f} | {cand / denom:.3f} | {tot0:.3f} | {tot1:.3f} | {tot2:.3f} | "
                    f"{step1:.1f} | {allrows / denom:.3f} | {lazy / denom:.3f} | {viol} | {mism} |"
                )
            out.append(f"mean sum |F| over steps 2..{K}: {Fsum:.1f}; pick entries K(K-1)/2 = {entries:.0f}")
        out.append("")
        out.append("candidate reads per pick (mean over queries), by pick number:")
        out.append("| variant | " + " | ".join(f"pick {s}" for s in REPORT_STEPS) + " |")
        out.append("|---|" + "---|" * len(REPORT_STEPS))
        for v in variants:
            vals = [np.mean([r[v][0][s - 1] for r in rows]) for s in REPORT_STEPS]
            out.append(f"| {v} | " + " | ".join(f"{x:.1f}" for x in vals) + " |")
        vals = [np.mean([r["F"][s - 1] for r in rows]) for s in REPORT_STEPS]
        out.append("| |F| (rows for w) | " + " | ".join(f"{x:.1f}" for x in vals) + " |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--data", default=DATA, help="folder holding hotpotqa-distractor and hotpotqa-distractor-e5")
    ap.add_argument("--queries", type=int, default=340, help="queries per encoder (the first N)")
    ap.add_argument("--out", help="also write the tables to this file")
    ARGS = ap.parse_args()
    DATA = ARGS.data
    t0 = time.time()
    res = main()
    txt = summarize(res)
    print(txt)
    print(f"elapsed {time.time() - t0:.1f} s")
    if ARGS.out:
        with open(ARGS.out, "w") as f:
            f.write(txt + "\n")
