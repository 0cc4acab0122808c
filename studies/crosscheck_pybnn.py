"""Cross-check of our ``dngo`` model against pybnn's DNGO, the public reference implementation.

pybnn (PyPI ``pybnn``, automl/pybnn, the DNGO model of RoBO by the authors' group) is never
a dependency of the suite: it lives in its own virtual environment, and this script has
two halves that exchange ``.npz``/``.json`` files:

* **ours** (the suite's interpreter, the default entry point) draws the data, fits our
  model, then starts the other half as a subprocess and compares;
* **pybnn** (``--pybnn-worker IN OUT``, run by the pybnn venv's interpreter) imports only
  numpy, torch and pybnn.

Measured in one run, on the same Hartmann6 sample (inputs in the unit cube, ``n`` = 200
and 2,000 training points, 1,000 held-out test points):

1. fit + predict seconds. pybnn: ``DNGO(do_mcmc=True)`` (its defaults: 500 epochs of Adam,
   batch 10, then emcee, 20 walkers, 2,000 burn-in + 2,000 steps) and ``do_mcmc=False``
   (Nelder-Mead on its marginal likelihood); seconds in the network training and in the
   hyperparameter step are taken apart by timing ``emcee.EnsembleSampler.run_mcmc`` and
   ``scipy.optimize.fmin``. Ours: ``DNGO.fit`` exactly as ``ask`` calls it (numpy network
   training by SGD with momentum, then slice sampling over Eq. 8; the first fit of a run,
   with its 100 burn-in sweeps, and a second, steady-state fit with 10), and
   ``predict`` on the test points. A failed fit is reported with its exception, not hidden.
   Test RMSE and mean negative log predictive density (Gaussian, mixture moments) of
   each are reported as a sanity check that both fitted something.
2. The marginal log-likelihood (dngo.txt Eq. 8) of both implementations on the SAME basis
   and standardised targets, for the same (alpha, beta): on our network's basis and on
   pybnn's. Ours is ``BasisStatistics.log_likelihood`` with the quadratic prior mean
   switched off (lambda = 0, Lambda = 0), pybnn's is ``DNGO.marginal_log_likelihood`` with
   its ``Theta`` and ``y`` set to that basis and targets (``theta = [log alpha, log 1/beta]``,
   its parametrisation). A third, independent value is the Gaussian evidence
   ``log N(y | 0, Phi Phi^T / alpha + I / beta)`` by an O(N^3) Cholesky factorisation in
   float64. pybnn subtracts ``beta/2 * ||y - Phi m||`` (the norm, not its square, as Eq. 8
   has it); the worker also reports pybnn's value with that one term replaced by
   ``beta/2 * ||y - Phi m||^2``, computed from pybnn's own intermediates ("fix"), and with
   its ``log(det K + 1e-10)`` also replaced by ``log det K`` ("fix2": the 1e-10 matters once
   ``det K`` falls below about 1e-9, and the determinant overflows for large ``beta N``),
   so that the rest of its formula is checked to float precision.

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 .venv/bin/python studies/crosscheck_pybnn.py \\
        --out docs/results/dngo_pybnn.json

pybnn's environment (never the suite's; torch pinned to the CPU wheel)::

    $HOME/.local/bin/uv venv /work/venvs/pybnn
    uv pip install --python /work/venvs/pybnn/bin/python --find-links /opt/wheels \\
        torch==2.13.0 pybnn emcee numpy scipy

Not a test: timings depend on the machine and its load (``uptime`` is recorded).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

DEFAULT_PYBNN_PYTHON = "/work/venvs/pybnn/bin/python"
N_TEST = 1000


def _uptime() -> str:
    return os.popen("uptime").read().strip()


def _gaussian_scores(mean: np.ndarray, var: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Test RMSE, mean and median negative log predictive density, coverage of the central 95 % interval."""
    var = np.maximum(var, 1e-300)
    nlpd = 0.5 * (np.log(2 * math.pi * var) + (y - mean) ** 2 / var)
    return {"rmse": float(np.sqrt(np.mean((y - mean) ** 2))), "nlpd": float(np.mean(nlpd)),
            "nlpd_median": float(np.median(nlpd)), "coverage95": float(np.mean(np.abs(y - mean) <= 1.96 * np.sqrt(var)))}


# ---------------------------------------------------------------------------------------------
# pybnn half: runs in pybnn's venv, imports nothing from the suite
# ---------------------------------------------------------------------------------------------
class _Timers:
    """Seconds spent inside emcee's run_mcmc and scipy's fmin (pybnn's hyperparameter step)."""

    def __init__(self) -> None:
        self.hyper_s = self.hyper_cpu_s = 0.0

    def wrap(self, fn):
        def timed(*args, **kwargs):
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.hyper_s += time.perf_counter() - t0
                self.hyper_cpu_s += time.process_time() - c0
        return timed


def _pybnn_fit(X, y, Xt, yt, do_mcmc: bool, seed: int, timers: _Timers) -> tuple[dict, np.ndarray | None]:
    import torch
    from pybnn.dngo import DNGO as PybnnDNGO

    torch.manual_seed(seed)
    model = PybnnDNGO(do_mcmc=do_mcmc, rng=np.random.RandomState(seed))
    rec: dict = {"impl": "pybnn", "do_mcmc": do_mcmc, "n": int(len(y))}
    timers.hyper_s = timers.hyper_cpu_s = 0.0
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # fmin prints its convergence report
            model.train(X, y)
    except Exception as exc:  # noqa: BLE001 - a failure is a result here
        rec.update(ok=False, fit_s=time.perf_counter() - t0, fit_cpu_s=time.process_time() - c0,
                   hyper_s=timers.hyper_s, hyper_cpu_s=timers.hyper_cpu_s,
                   error=f"{type(exc).__name__}: {exc}",
                   where=" | ".join(traceback.format_exc().strip().splitlines()[-5:-1]))
        theta = getattr(model, "Theta", None)
        return rec, theta
    rec["fit_s"], rec["fit_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    rec["hyper_s"], rec["hyper_cpu_s"] = timers.hyper_s, timers.hyper_cpu_s
    rec["net_s"], rec["net_cpu_s"] = rec["fit_s"] - rec["hyper_s"], rec["fit_cpu_s"] - rec["hyper_cpu_s"]
    t0, c0 = time.perf_counter(), time.process_time()
    mean, var = model.predict(Xt)
    rec["predict_s"], rec["predict_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    rec["ok"] = True
    h = np.asarray(model.hypers, dtype=float)
    rec["alpha_median"], rec["beta_median"] = float(np.median(h[:, 0])), float(np.median(h[:, 1]))
    rec.update(_gaussian_scores(mean, var, yt))
    return rec, model.Theta


def _pybnn_mll(Phi: np.ndarray, ys: np.ndarray, pairs: np.ndarray, dtype) -> list[dict]:
    """pybnn's ``DNGO.marginal_log_likelihood`` on a given basis, and its norm term squared."""
    from pybnn.dngo import DNGO as PybnnDNGO

    model = PybnnDNGO(do_mcmc=False, rng=np.random.RandomState(0))
    model.Theta = np.asarray(Phi, dtype=dtype)
    model.y = np.asarray(ys, dtype=float)[:, None]  # pybnn keeps y as a column (DNGO.train)
    out = []
    for log_alpha, log_beta in pairs:
        theta = np.array([log_alpha, -log_beta])  # pybnn: theta[1] = log sigma^2 = -log beta
        try:
            with np.errstate(all="ignore"):
                raw = float(np.asarray(model.marginal_log_likelihood(theta)).reshape(-1)[0])
                # pybnn's own intermediates, as its marginal_log_likelihood computes them
                alpha, beta = np.exp(theta[0]), 1 / np.exp(theta[1])
                K = beta * np.dot(model.Theta.T, model.Theta)
                K += np.eye(model.Theta.shape[1]) * alpha  # in place, as pybnn: K keeps that dtype
                m = np.dot(beta * np.dot(np.linalg.inv(K), model.Theta.T), model.y)
                norm = float(np.linalg.norm(model.y - np.dot(model.Theta, m), 2))
                det = float(np.linalg.det(K))
                sign, logdet = np.linalg.slogdet(K)
            fixed = raw + beta / 2 * norm - beta / 2 * norm**2
            # pybnn takes log(det K + 1e-10): wrong once det K < ~1e-9, -inf/nan once det K overflows
            both = fixed + 0.5 * math.log(det + 1e-10) - 0.5 * float(logdet) \
                if sign > 0 and math.isfinite(det + 1e-10) and det + 1e-10 > 0 else None
            out.append({"raw": raw, "squared_norm_fix": fixed, "both_fixed": both, "det_K": det,
                        "logdet_K": float(logdet), "error": None})
        except Exception as exc:  # noqa: BLE001 - e.g. LinAlgError: Singular matrix
            out.append({"raw": None, "squared_norm_fix": None, "both_fixed": None, "det_K": None, "logdet_K": None,
                        "error": f"{type(exc).__name__}: {exc}"})
    return out


def _pybnn_grid(Phi: np.ndarray, ys: np.ndarray, dtype) -> dict:
    """pybnn's marginal likelihood over its whole MCMC box, ``[-10, 10]^2`` on a 21 x 21 grid: failures."""
    from pybnn.dngo import DNGO as PybnnDNGO

    model = PybnnDNGO(do_mcmc=False, rng=np.random.RandomState(0))
    model.Theta = np.asarray(Phi, dtype=dtype)
    model.y = np.asarray(ys, dtype=float)[:, None]
    errors: dict[str, int] = {}
    nonfinite = sentinel = 0
    for a in np.linspace(-10, 10, 21):
        for b in np.linspace(-10, 10, 21):
            try:
                with np.errstate(all="ignore"):
                    v = float(np.asarray(model.marginal_log_likelihood(np.array([a, b]))).reshape(-1)[0])
            except Exception as exc:  # noqa: BLE001 - counted
                key = f"{type(exc).__name__}: {exc}"
                errors[key] = errors.get(key, 0) + 1
                continue
            nonfinite += not math.isfinite(v)
            sentinel += v == -1e25  # pybnn's value for a NaN likelihood
    return {"points": 441, "exceptions": errors, "non_finite": nonfinite, "nan_sentinel": sentinel,
            "K_dtype": str((np.exp(np.float64(0.0)) * model.Theta[:1].T @ model.Theta[:1]).dtype)}


def pybnn_worker(in_path: str, out_path: str) -> None:
    """The pybnn half: fits and marginal likelihoods on the data in ``in_path``; JSON to ``out_path``."""
    import warnings

    warnings.filterwarnings("ignore")
    import emcee
    import pybnn
    import scipy.optimize
    import torch

    torch.set_num_threads(1)
    timers = _Timers()
    emcee.EnsembleSampler.run_mcmc = timers.wrap(emcee.EnsembleSampler.run_mcmc)
    import pybnn.dngo as pd
    pd.optimize.fmin = timers.wrap(scipy.optimize.fmin)

    data = np.load(in_path)
    X, y, Xt, yt = data["X"], data["y"], data["Xt"], data["yt"]
    seed, ns, pairs = int(data["seed"]), [int(v) for v in data["ns"]], data["pairs"]
    fits = bool(data["fits"])
    res: dict = {"versions": {"pybnn": getattr(pybnn, "__version__", "0.0.5?"), "torch": torch.__version__,
                              "numpy": np.__version__, "emcee": emcee.__version__},
                 "uptime_start": _uptime(), "fits": [], "mll": {}, "grid": {}}
    # torch's first-call initialisation (seconds) is paid once per process: keep it out of the timings
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        _pybnn_fit(X[:20], y[:20], Xt[:5], yt[:5], False, seed, timers)
    res["warmup_s"] = time.perf_counter() - t0
    bases = {}
    for n in ns if fits else ():
        for do_mcmc in (True, False):
            rec, theta = _pybnn_fit(X[:n], y[:n], Xt, yt, do_mcmc, seed, timers)
            rec["uptime"] = _uptime()
            res["fits"].append(rec)
            print(json.dumps(rec), file=sys.stderr, flush=True)  # progress; stdout is not read
            if theta is not None:
                bases[f"pybnn_{n}"] = np.asarray(theta)
    for n in ns:
        for src in ("ours", "pybnn"):
            Phi = data[f"phi_ours_{n}"] if src == "ours" else bases.get(f"pybnn_{n}")
            if Phi is None:
                continue
            key = f"{src}_basis_n{n}"
            res["mll"][key] = {"float32": _pybnn_mll(Phi, data[f"ys_{n}"], pairs, np.float32),
                               "float64": _pybnn_mll(Phi, data[f"ys_{n}"], pairs, np.float64)}
            res["grid"][key] = _pybnn_grid(Phi, data[f"ys_{n}"], np.float32)
    res["uptime_end"] = _uptime()
    np.savez(out_path + ".npz", **bases)
    with open(out_path, "w") as fh:
        json.dump(res, fh, indent=1)


# ---------------------------------------------------------------------------------------------
# our half: the suite's interpreter
# ---------------------------------------------------------------------------------------------
def _ours_fit(space, X, y, Xt, yt, seed: int) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
    """Time our model's first and second fit and a predict; return the record, basis, targets, samples."""
    from benchsuite.optimizers.common.bo_common import single_threaded_blas
    from benchsuite.optimizers.models.gp import standardise

    from benchsuite.registry import get_optimizer

    opt = get_optimizer("dngo")(space, None, np.random.default_rng(seed))
    rec: dict = {"impl": "ours", "n": int(len(y))}
    with single_threaded_blas():
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            post = opt.fit(X, y)  # the first fit of a run: 100 burn-in sweeps + 10 samples
        except Exception as exc:  # noqa: BLE001 - reported, never hidden
            rec.update(ok=False, fit_s=time.perf_counter() - t0, fit_cpu_s=time.process_time() - c0,
                       error=f"{type(exc).__name__}: {exc}")
            return rec, None, None, None
        rec["fit_s"], rec["fit_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        pr = post.predict(Xt)
        rec["predict_s"], rec["predict_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        Phi = opt.features(X)  # the basis of the model just timed (input rescaling included)
        theta = post.theta.copy()
        t0, c0 = time.perf_counter(), time.process_time()
        opt.fit(X, y)  # steady state, as at every later ask: 10 burn-in sweeps + 10 samples
        rec["fit2_s"], rec["fit2_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    rec["ok"] = True
    mean = pr.mean.mean(0)
    var = pr.predictive_variance().mean(0) + pr.mean.var(0)  # the mixture's variance, as pybnn's predict
    rec.update(_gaussian_scores(mean, var, yt))
    rec["alpha_median"], rec["beta_median"] = float(np.median(np.exp(theta[:, 0]))), float(np.median(np.exp(theta[:, 1])))
    shift, scale = standardise(y)
    return rec, Phi, (np.asarray(y, float) - shift) / scale, theta


def _ours_mll(Phi: np.ndarray, X: np.ndarray, ys: np.ndarray, pairs: np.ndarray) -> list[float]:
    """Our Eq. (8) with the quadratic prior mean off (lambda = 0, Lambda = 0), per (log alpha, log beta)."""
    from benchsuite.optimizers.models.adaptive_basis import BasisStatistics

    stats = BasisStatistics(np.asarray(Phi, dtype=np.float64), X, ys)
    K = X.shape[1]
    tail = np.concatenate([[0.0], np.full(K, 0.5), np.full(K, -np.inf)])  # exp(-inf) = 0: eta = 0
    return [float(stats.log_likelihood(np.concatenate([[la, lb], tail]))) for la, lb in pairs]


def _evidence(Phi: np.ndarray, ys: np.ndarray, log_alpha: float, log_beta: float) -> float:
    """``log N(ys | 0, Phi Phi^T / alpha + I / beta)`` by Cholesky, float64, O(N^3): the reference."""
    import scipy.linalg

    Phi = np.asarray(Phi, dtype=np.float64)
    C = Phi @ Phi.T / math.exp(log_alpha) + np.eye(len(ys)) / math.exp(log_beta)
    L = scipy.linalg.cholesky(C, lower=True)
    z = scipy.linalg.solve_triangular(L, ys, lower=True)
    return float(-0.5 * z @ z - np.log(np.diag(L)).sum() - 0.5 * len(ys) * math.log(2 * math.pi))


def _relerr(a, b) -> float | None:
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return None
    return abs(a - b) / max(abs(b), 1e-300)


def main() -> None:
    """Run both halves and write the comparison JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pybnn-worker", nargs=2, metavar=("IN", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--pybnn-python", default=DEFAULT_PYBNN_PYTHON, help="interpreter of pybnn's venv")
    ap.add_argument("--ns", default="200,2000", help="training-set sizes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--benchmark", default="hartmann6")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed to the pybnn half")
    ap.add_argument("--mll-only", action="store_true",
                    help="skip pybnn's fits: only the marginal likelihoods on our basis (e.g. under another numpy)")
    ap.add_argument("--out", default="docs/results/dngo_pybnn.json")
    args = ap.parse_args()
    if args.pybnn_worker:
        pybnn_worker(*args.pybnn_worker)
        return

    from benchsuite.registry import make_benchmark

    ns = [int(v) for v in args.ns.split(",")]
    bench = make_benchmark(args.benchmark)
    rng = np.random.default_rng(args.seed)
    configs = [bench.space.sample(rng) for _ in range(max(ns) + N_TEST)]
    Xall = np.asarray(bench.space.to_unit(configs), dtype=float)
    yall = np.array([bench.evaluate(c).loss for c in configs])
    X, y, Xt, yt = Xall[:max(ns)], yall[:max(ns)], Xall[max(ns):], yall[max(ns):]
    out: dict = {"benchmark": args.benchmark, "seed": args.seed, "ns": ns, "n_test": N_TEST,
                 "uptime_start": _uptime(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "fits": []}

    payload: dict = {"X": X, "y": y, "Xt": Xt, "yt": yt, "seed": args.seed, "ns": np.array(ns),
                     "fits": not args.mll_only}
    pairs: list[tuple[float, float]] = [(0.0, math.log(1000.0)), (0.0, math.log(100.0)), (math.log(0.1), math.log(10.0))]
    phis, yss = {}, {}
    for n in ns:
        rec, Phi, ys, theta = _ours_fit(bench.space, X[:n], y[:n], Xt, yt, args.seed)
        rec["uptime"] = _uptime()
        out["fits"].append(rec)
        print(json.dumps(rec), flush=True)
        if Phi is None:
            continue
        phis[n], yss[n] = Phi, ys
        payload[f"phi_ours_{n}"], payload[f"ys_{n}"] = Phi, ys
        pairs.append((float(np.median(theta[:, 0])), float(np.median(theta[:, 1]))))  # our posterior's median
    payload["pairs"] = np.array(pairs)

    with tempfile.TemporaryDirectory() as tmp:
        inp, res = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.json")
        np.savez(inp, **payload)
        t0 = time.perf_counter()
        proc = subprocess.run([args.pybnn_python, os.path.abspath(__file__), "--pybnn-worker", inp, res],
                              timeout=args.timeout, stdout=subprocess.PIPE, stderr=None, text=True,
                              env=os.environ.copy())
        out["pybnn_wall_s"] = time.perf_counter() - t0
        if proc.returncode != 0:
            sys.exit(f"pybnn half failed (rc {proc.returncode}); its traceback is above")
        with open(res) as fh:
            pyb = json.load(fh)
        pyb_bases = dict(np.load(res + ".npz"))
    out["fits"] += pyb.pop("fits")
    out["pybnn"] = {k: v for k, v in pyb.items() if k not in ("mll", "grid")}
    out["pybnn_mll_grid"] = pyb["grid"]

    # marginal log-likelihood on the same basis and targets
    mll_rows = []
    for n in ns:
        for src in ("ours", "pybnn"):
            Phi = phis.get(n) if src == "ours" else pyb_bases.get(f"pybnn_{n}")
            key = f"{src}_basis_n{n}"
            if Phi is None or key not in pyb["mll"] or n not in yss:
                continue
            ours = _ours_mll(Phi, X[:n], yss[n], np.array(pairs))
            for i, (la, lb) in enumerate(pairs):
                ref = _evidence(Phi, yss[n], la, lb)
                p32, p64 = pyb["mll"][key]["float32"][i], pyb["mll"][key]["float64"][i]
                row = {"basis": src, "n": n, "log_alpha": la, "log_beta": lb, "evidence_cholesky": ref, "ours": ours[i],
                       "pybnn_f32": p32["raw"], "pybnn_f32_fixed": p32["squared_norm_fix"], "pybnn_f32_error": p32["error"],
                       "pybnn_f64": p64["raw"], "pybnn_f64_fixed": p64["squared_norm_fix"],
                       "pybnn_f32_both_fixed": p32["both_fixed"], "pybnn_f64_both_fixed": p64["both_fixed"],
                       "pybnn_det_K_f32": p32["det_K"], "pybnn_logdet_K_f32": p32["logdet_K"],
                       "pybnn_f64_error": p64["error"]}
                row["relerr_ours_vs_evidence"] = _relerr(ours[i], ref)
                row["relerr_pybnn_f32_vs_evidence"] = _relerr(p32["raw"], ref)
                row["relerr_pybnn_f32_fixed_vs_ours"] = _relerr(p32["squared_norm_fix"], ours[i])
                row["relerr_pybnn_f64_fixed_vs_ours"] = _relerr(p64["squared_norm_fix"], ours[i])
                row["relerr_pybnn_f32_both_fixed_vs_ours"] = _relerr(p32["both_fixed"], ours[i])
                row["relerr_pybnn_f64_both_fixed_vs_ours"] = _relerr(p64["both_fixed"], ours[i])
                mll_rows.append(row)
    out["mll"] = mll_rows
    out["uptime_end"] = _uptime()
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)

    print(f"\n{'impl':6} {'mcmc':5} {'n':>5} {'ok':3} {'fit s':>7} {'fit cpu':>7} {'net/hyper cpu':>14} "
          f"{'2nd fit':>7} {'pred s':>6} {'rmse':>6} {'nlpd':>7} {'cov95':>5}")
    nan = float("nan")
    for r in out["fits"]:
        split = f"{r['net_cpu_s']:.1f} / {r['hyper_cpu_s']:.1f}" if "net_cpu_s" in r else ""
        print(f"{r['impl']:6} {str(r.get('do_mcmc', '-')):5} {r['n']:>5} {str(r['ok']):3} {r['fit_s']:7.1f} "
              f"{r.get('fit_cpu_s', nan):7.1f} {split:>14} {r.get('fit2_s', nan):7.2f} {r.get('predict_s', nan):6.3f} "
              f"{r.get('rmse', nan):6.3f} {r.get('nlpd', nan):7.2f} {r.get('coverage95', nan):5.2f} {r.get('error', '')}")
    print(f"\n{'basis':6} {'n':>5} {'log a':>6} {'log b':>6} {'evidence':>12} {'ours':>12} {'pybnn f32':>12} "
          f"{'f32 fix':>12} {'f32 fix2':>12} {'f64 fix2':>12}")
    for r in mll_rows:
        def f(v):
            return f"{v:12.4f}" if isinstance(v, float) else f"{str(v)[:12]:>12}"
        print(f"{r['basis']:6} {r['n']:>5} {r['log_alpha']:6.2f} {r['log_beta']:6.2f} {f(r['evidence_cholesky'])} "
              f"{f(r['ours'])} {f(r['pybnn_f32'])} {f(r['pybnn_f32_fixed'])} {f(r['pybnn_f32_both_fixed'])} "
              f"{f(r['pybnn_f64_both_fixed'])}")
    for key, g in pyb["grid"].items():
        print(f"pybnn marginal likelihood on the [-10, 10]^2 grid, {key} (float32 basis, K {g['K_dtype']}): "
              f"{sum(g['exceptions'].values())} exceptions {g['exceptions']}, {g['non_finite']} non-finite, "
              f"{g['nan_sentinel']} NaN sentinels of 441")
    print("uptime:", out["uptime_end"])


if __name__ == "__main__":
    main()
