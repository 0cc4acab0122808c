"""Speed of the OTMANN distance (issue 12, "Distance speed").

    OMP_NUM_THREADS=1 .venv/bin/python perf/bench_otmann.py [--n 100] [--layers 20] [--repeats 7] [--seed 0] [--jobs 1]

Random CNNs of ``--layers`` layers (a chain of conv/res/pool layers, 1-2 fc, softmax, with random
skip edges; the same generator as tests/test_otmann.py). Reported, median of ``repeats`` wall
times in milliseconds:

* one distance between two CNNs (one nu_str, and the NASBOT kernel's four), per-graph
  quantities computed inside the timing ("cold": caches cleared) and already cached ("warm");
* the symmetric n x n matrix of ``otmann_matrix`` over the four default nu_str (cold: it
  includes computing every graph's masses and path lengths), and n candidates against n other
  networks (the NASBOT acquisition case, 4 x n^2 OT problems);
* the same matrix pair by pair (what the authors' loop does), and the time of the
  network-simplex solves alone, to show where the time goes. Wall and process-CPU times are
  printed: on a shared machine the CPU time is the better estimate of an idle core's wall time.

Goal (issue 12): a 100 x 100 matrix in under 0.5 s; dragonfly-opt takes about 0.5 ms per pair
(see studies/crosscheck_otmann_dragonfly.py --time for its number on this machine).
"""
from __future__ import annotations

import _clock  # noqa: F401  (prints CPU s, wall s and the load average at exit)

import argparse
import statistics
import time

import numpy as np

from benchsuite.architectures import otmann as O
from benchsuite.architectures.layer_graph import LayerGraph

CONVS = ("conv3", "conv5", "conv7", "res3", "res5", "res7")


def random_cnn(n_layers: int, rng: np.random.Generator) -> LayerGraph:
    """A random CNN for OTMANN: chain plus random skip edges (same as the tests' generator)."""
    n_proc = n_layers - 3
    n_fc = int(rng.integers(1, 3))
    labels = ["conv3"]
    for _ in range(n_proc - n_fc - 1):
        labels.append(str(rng.choice(("max-pool", "avg-pool"))) if rng.random() < 0.15 else str(rng.choice(CONVS)))
    labels = ["ip"] + labels + ["fc"] * n_fc + ["softmax", "op"]
    units = [None if lab in ("ip", "op", "softmax", "max-pool", "avg-pool") else int(rng.choice((8, 16, 32, 64, 128)))
             for lab in labels]
    edges = {(i, i + 1) for i in range(n_layers - 1)}
    for _ in range(int(rng.integers(0, n_layers // 3 + 1))):
        p = int(rng.integers(0, n_layers - 3))
        c = int(rng.integers(p + 2, n_layers - 1)) if p + 2 < n_layers - 1 else p + 1
        if p == 0 and not labels[c].startswith(("conv", "res")):
            continue
        edges.add((p, c))
    return LayerGraph("cnn", tuple(labels), tuple(units), tuple(sorted(edges)))


def median_ms(fn, repeats: int, setup=None) -> float:
    """Median wall milliseconds of ``repeats`` calls of ``fn`` (``setup`` runs untimed before each)."""
    return timed(fn, repeats, setup)[0]


def timed(fn, repeats: int, setup=None) -> tuple[float, float]:
    """Median wall and median process-CPU milliseconds of ``repeats`` calls of ``fn``.

    On a shared machine the CPU time of a single-threaded call is what its wall time would be
    on an idle core, so both are printed.
    """
    wall, cpu = [], []
    for _ in range(repeats):
        if setup is not None:
            setup()
        c, t = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return 1e3 * statistics.median(wall), 1e3 * statistics.median(cpu)


def main() -> None:
    """Run the measurements and print one line per quantity."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--layers", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="also time otmann_matrix(..., n_jobs=JOBS)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    A = [random_cnn(args.layers, rng) for _ in range(args.n)]
    B = [random_cnn(args.layers, rng) for _ in range(args.n)]
    nus = O.DEFAULT_NU_STRS
    clear = O._prepare_cached.cache_clear
    t0 = time.perf_counter()
    O.otmann_distance(A[0], A[1])  # imports POT (one-off per process)
    print(f"first call incl. POT import: {1e3 * (time.perf_counter() - t0):.0f} ms")
    print(f"networks: {args.n} random CNNs of {args.layers} layers; nu_strs = {nus}; median of {args.repeats}")

    g1, g2 = A[2], A[3]
    r = args.repeats * 20
    print(f"one distance, 1 nu_str, cold:   {median_ms(lambda: O.otmann_distance(g1, g2), r, clear):8.3f} ms")
    O.prepare(g1), O.prepare(g2)
    print(f"one distance, 1 nu_str, warm:   {median_ms(lambda: O.otmann_distance(g1, g2), r):8.3f} ms")
    print(f"one pair, 4 nu_strs, warm:      {median_ms(lambda: O.otmann_matrix([g1], [g2], nus), r):8.3f} ms")
    pa, pb = O.prepare(g1), O.prepare(g2)
    print(f"per-graph prepare (one graph):  {median_ms(lambda: O._prepare_cached.__wrapped__(g1, O.FC_MASS_COEFF), r):8.3f} ms")
    del pa, pb

    n = args.n
    t_sym, c_sym = timed(lambda: O.otmann_matrix(A, None, nus), args.repeats, clear)
    print(f"{n} x {n} symmetric matrix, 4 nu_strs, cold: {t_sym:8.1f} ms wall, {c_sym:8.1f} ms CPU "
          f"({len(nus) * n * (n - 1) // 2} OT problems, {1e3 * c_sym / (len(nus) * n * (n - 1) / 2):.1f} us CPU each)")
    t_sym1, c_sym1 = timed(lambda: O.otmann_matrix(A, None, (O.PAPER_NU_STR,)), args.repeats, clear)
    print(f"{n} x {n} symmetric matrix, 1 nu_str, cold:  {t_sym1:8.1f} ms wall, {c_sym1:8.1f} ms CPU")
    t_rect, c_rect = timed(lambda: O.otmann_matrix(A, B, nus), max(3, args.repeats // 2), clear)
    print(f"{n} x {n} candidates vs evaluated, 4 nu_strs, cold: {t_rect:8.1f} ms wall, {c_rect:8.1f} ms CPU "
          f"({len(nus) * n * n} OT problems)")
    if args.jobs > 1:
        t_thr = median_ms(lambda: O.otmann_matrix(A, None, nus, n_jobs=args.jobs), args.repeats, clear)
        print(f"{n} x {n} symmetric matrix, 4 nu_strs, cold, n_jobs={args.jobs}: {t_thr:8.1f} ms")

    # where the time goes: the same symmetric matrix pair by pair, and the solves alone
    m = min(n, 30)
    sub = A[:m]
    t_pair = median_ms(lambda: [O.otmann_matrix([sub[i]], [sub[j]], nus) for i in range(m) for j in range(i + 1, m)],
                       3)
    pairs = m * (m - 1) // 2
    print(f"pair-by-pair loop (otmann_matrix per pair, 4 nu_strs): {1e3 * t_pair / pairs:.1f} us per pair "
          f"-> {t_pair / pairs * n * (n - 1) / 2:.0f} ms for {n} x {n}")
    solve = O._solver()
    probs = []
    for i in range(m):
        for j in range(i + 1, m):
            P1, P2 = O.prepare(sub[i]), O.prepare(sub[j])
            tot = P1.total_mass + P2.total_mass
            a = np.append(P1.masses, P2.total_mass) / tot
            b = np.append(P2.masses, P1.total_mass) / tot
            C = np.full((P1.n_layers + 1, P2.n_layers + 1), 1.0)
            C[-1, -1] = 0.0
            lab = O.label_mismatch_matrix([O._VOCAB["cnn"][k] for k in P1.label_idx],
                                          [O._VOCAB["cnn"][k] for k in P2.label_idx], "cnn")
            body = lab + 0.4 * O._struct_cost(P1.features, P2.features)
            body[~np.isfinite(lab)] = 4.0  # as otmann_matrix: 4 x penalty
            C[:-1, :-1] = body
            probs.append((a, b, np.ascontiguousarray(C)))
    t_solve, c_solve = timed(lambda: [solve(*p) for p in probs], 5)
    print(f"network simplex alone, on the full augmented problem (ip/op included, as the authors solve it): "
          f"{1e3 * t_solve / len(probs):.1f} us wall, {1e3 * c_solve / len(probs):.1f} us CPU per problem "
          f"-> {c_solve / len(probs) * len(nus) * n * (n - 1) / 2:.0f} ms CPU for a {n} x {n} symmetric matrix")


if __name__ == "__main__":
    main()
