"""BoTorch's standard loop: SingleTaskGP + qLogEI maximised by ``optimize_acqf``; an optional extra.

The modern baseline users compare against (issue 24, item 5), and the speed anchor measured in
the same run as ``gp_ei`` (``perf/bench_botorch_vs_gp_ei.py``). Install with
``pip install 'benchsuite[botorch]'``. What each ask does, as in BoTorch's tutorials
(Balandat et al. 2020, "BoTorch", NeurIPS; Ament et al. 2023, "Unexpected Improvements to
Expected Improvement", NeurIPS):

* the model is ``SingleTaskGP`` with everything left at the installed version's defaults: its
  kernel and priors (in 0.18 an ARD RBF kernel with the dimension-scaled log-normal
  length-scale prior and a log-normal noise prior, Hvarfner et al. 2024), a constant mean and
  the ``Standardize`` outcome transform. No input transform: the inputs are already in the
  unit cube (what ``Normalize`` would produce). Fitted by maximum a posteriori with
  ``fit_gpytorch_mll`` (one fit per ask, from the defaults: no warm start, as in the tutorials).
  BoTorch maximises, so the GP is fitted to ``-loss``.
* the acquisition is ``qLogExpectedImprovement`` with ``best_f`` the best observed ``-loss`` and
  ``X_pending`` the encodings of the running trials (asynchronous workers: the joint
  improvement of the new point and the pending ones, so a point next to a running one is
  worth little).
* ``optimize_acqf`` with ``q=1``, ``num_restarts`` L-BFGS-B starts chosen from ``raw_samples``
  Sobol points (10 and 512, the values of BoTorch's tutorials, e.g. ``closed_loop_botorch_only``
  and ``turbo_1``).

Spaces: continuous variables are their unit-cube coordinate (log scale where the variable is);
integers and ordinals are one relaxed coordinate each (the space's bin encoding) and are
rounded to their level's bin centre; categoricals with more than two choices are one-hot
columns, optimised in the relaxed cube and decoded by the arg-max of their group (two-choice
categoricals and binaries are one coordinate: the same information). The rounding is
``optimize_acqf``'s ``post_processing_func``, so the restarts are compared on the acquisition
values of the points that will be evaluated; the best restart whose point was not evaluated
yet (nor is running) is taken, which keeps a discrete space from asking for a known point.

Initial design: ``n_init`` scrambled Sobol points (default ``max(5, 2 d)`` for ``d`` variables,
Ax's default Sobol step before its BoTorch model); a given design (``Capabilities(initial_design=True)``,
e.g. the COMBO authors' points) comes first and whole, Sobol points filling up to ``n_init``;
random points while fewer than two results are in.

Failed trials are not given to the GP (a failure has no loss to model; inventing one, such as
the worst loss seen, would bend the standardised model), but they stay in ``X_pending``, as Ax
keeps abandoned arms pending so they are not generated again.

Seeds: every model-based ask draws a torch seed from the run's optimizer stream and runs under
``torch.random.fork_rng`` with it (the fit's restarts, the Sobol raw samples and the QMC base
samples all draw from it), so a run seed fixes the suggestions and the global torch state is
left as it was. CPU, float64, one torch thread during the ask (restored after). The fidelity
axis is ignored: every evaluation is at full fidelity.
"""
from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import POSITIVE_INT, Setting
from benchsuite.space import Categorical

from .acquisition.optimize import sobol_points
from .common.bo_common import check_vector_space


class _Encoding:
    """Configurations <-> the model's feature columns (unit cube, one-hot groups for categoricals)."""

    def __init__(self, space: Any):
        self.space = space
        self.blocks: list[tuple[Any, int, int]] = []  # (variable, first column, number of columns)
        col = 0
        for v in space.variables:
            width = v.n_levels if self.is_one_hot(v) else 1
            self.blocks.append((v, col, width))
            col += width
        self.dim = col
        self.needs_snap = any(v.is_discrete for v in space.variables)

    @staticmethod
    def is_one_hot(v: Any) -> bool:
        return isinstance(v, Categorical) and v.n_levels > 2

    def encode(self, configs: Sequence[dict]) -> np.ndarray:
        """``(n, dim)`` features of valid configurations."""
        X = np.zeros((len(configs), self.dim))
        for v, c, w in self.blocks:
            values = [cfg[v.name] for cfg in configs]
            if w == 1 and not self.is_one_hot(v):
                X[:, c] = v.to_unit(values)
            else:
                X[np.arange(len(configs)), c + np.array([v.to_code(x) for x in values], dtype=int)] = 1.0
        return X

    def decode(self, X: np.ndarray) -> list[dict]:
        """Configurations of (relaxed) feature rows: rounding, and the arg-max of each one-hot group."""
        X = np.clip(np.atleast_2d(np.asarray(X, dtype=float)), 0.0, 1.0)
        cols: dict[str, list[Any]] = {}
        for v, c, w in self.blocks:
            if self.is_one_hot(v):
                cols[v.name] = [v.from_code(k) for k in np.argmax(X[:, c:c + w], axis=1)]
            else:
                cols[v.name] = v.from_unit(X[:, c])
        return [{v.name: cols[v.name][i] for v in self.space.variables} for i in range(X.shape[0])]

    def snap(self, X: np.ndarray) -> np.ndarray:
        """Relaxed rows ``(..., dim)`` -> the features of the configurations they decode to."""
        shape = X.shape
        flat = X.reshape(-1, self.dim)
        return self.encode(self.decode(flat)).reshape(shape)


@contextlib.contextmanager
def _torch_scope(torch: Any, seed: int, threads: int) -> Iterator[None]:
    """Seeded torch RNG (the global state restored after), ``threads`` intra-op threads, quiet warnings."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
            torch.manual_seed(seed)
            from botorch.exceptions.warnings import BotorchWarning

            # BoTorch's chatter (optimisation restarts, input scaling, numerical jitter) once per ask
            warnings.simplefilter("ignore", BotorchWarning)
            warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"botorch\.")
            warnings.filterwarnings("ignore", module=r"(gpytorch|linear_operator)\.")
            yield
    finally:
        torch.set_num_threads(before)


class BoTorchQLogEI(Optimizer):
    """SingleTaskGP (BoTorch's defaults) + qLogEI with pending points, maximised by ``optimize_acqf``."""

    needs = ("botorch", "gpytorch")  # the [botorch] extra (it brings torch)
    name = "botorch_qlogei"
    description = ("BoTorch SingleTaskGP (default priors) + qLogEI via optimize_acqf, pending trials as X_pending "
                   "(optional extra: pip install 'benchsuite[botorch]')")
    supports = Capabilities(spaces={"continuous", "discrete", "mixed"}, fidelity="ignores", parallel=True,
                            initial_design=True)
    # small: quick conformance checks (BoTorch's tutorials use 2 restarts and 32 raw samples in SMOKE_TEST mode)
    test_settings = {"n_init": 4, "num_restarts": 2, "raw_samples": 16, "mc_samples": 16, "maxiter": 10,
                     "fit_maxiter": 10}
    settings_spec = {
        "n_init": Setting(None, "initial Sobol points; empty: max(5, 2 x variables), Ax's default Sobol step",
                          type=int, domain=[None, POSITIVE_INT]),
        "num_restarts": Setting(10, "L-BFGS-B starts of optimize_acqf (BoTorch tutorials: NUM_RESTARTS = 10)",
                                domain=POSITIVE_INT),
        "raw_samples": Setting(512, "Sobol points the starts are chosen from (BoTorch tutorials: RAW_SAMPLES = 512)",
                               domain=POSITIVE_INT),
        "mc_samples": Setting(None, "QMC base samples of qLogEI; empty: BoTorch's default (512 in 0.18)",
                              type=int, domain=[None, POSITIVE_INT]),
        "maxiter": Setting(None, "L-BFGS-B iterations per start; empty: BoTorch's default (gen_candidates_scipy: 2000)",
                           type=int, domain=[None, POSITIVE_INT]),
        "fit_maxiter": Setting(None, "L-BFGS-B iterations of the MAP fit; empty: BoTorch's default "
                                     "(fit_gpytorch_mll_scipy: scipy's L-BFGS-B default)",
                               type=int, domain=[None, POSITIVE_INT]),
        "threads": Setting(1, "torch intra-op threads during an ask (restored after); one: small matrices on "
                              "shared cores (our choice, as gp_ei's single-threaded BLAS)", domain=POSITIVE_INT),
    }

    def setup(self) -> None:
        self.space = check_vector_space(self.space, self.name)
        self.encoding = _Encoding(self.space)
        n = self.settings["n_init"]
        self.n_init = int(n) if n is not None else max(5, 2 * len(self.space))
        self.design = sobol_points(self.rng, self.n_init, len(self.space))  # in the space's own unit cube
        self.n_asked = 0
        self.last_timing: dict[str, float] = {}

    # -- helpers -----------------------------------------------------------------------------------
    def _initial(self, i: int) -> Suggestion:
        config = self.next_initial()
        if config is None:
            config = self.space.from_unit(self.design[i]) if i < len(self.design) else self.space.sample(self.rng)
        return Suggestion(config, self.full_fidelity(), {"phase": "init"})

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        i = self.n_asked
        self.n_asked += 1
        configs, losses, _ = self.observations()
        # a given design is evaluated whole, even when longer than n_init (Sobol points fill up to n_init)
        if i < self.n_init or self._design_given < len(self.given_design) or len(losses) < 2:
            return self._initial(i)
        import torch

        seed = int(self.rng.integers(0, 2**31 - 1))
        failed = [t.config for t in self.history if t.result is not None and t.result.failed]
        busy = [t.config for t in pending] + failed
        with _torch_scope(torch, seed, int(self.settings["threads"])):
            x, info = self._bo_step(torch, configs, np.asarray(losses, dtype=float), busy)
        if x is None:  # the model could not be used (numerical failure): a random point, said so in info
            return Suggestion(self.space.sample(self.rng), self.full_fidelity(), info)
        return Suggestion(x, self.full_fidelity(), info)

    def _bo_step(self, torch: Any, configs: list, losses: np.ndarray, busy: list) -> tuple[Any, dict]:
        from botorch.acquisition.logei import qLogExpectedImprovement
        from botorch.exceptions.errors import ModelFittingError
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from botorch.optim import optimize_acqf
        from gpytorch.mlls import ExactMarginalLogLikelihood
        from linear_operator.utils.errors import NanError, NotPSDError

        st, enc = self.settings, self.encoding
        tk = {"dtype": torch.float64, "device": torch.device("cpu")}
        info: dict[str, Any] = {"phase": "bo"}
        t0, c0 = time.perf_counter(), time.process_time()
        X = torch.tensor(enc.encode(configs), **tk)
        Y = torch.tensor(-losses, **tk).unsqueeze(-1)  # BoTorch maximises
        model = SingleTaskGP(X, Y)
        try:
            fit_kwargs = {} if st["fit_maxiter"] is None else \
                {"optimizer_kwargs": {"options": {"maxiter": int(st["fit_maxiter"])}}}
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model), **fit_kwargs)
        except ModelFittingError:  # every attempt failed: go on with the priors' modes, and say so
            info["fit"] = "failed"
        t1, c1 = time.perf_counter(), time.process_time()
        X_pending = torch.tensor(enc.encode(busy), **tk) if busy else None
        sampler = None
        if st["mc_samples"] is not None:
            from botorch.sampling.normal import SobolQMCNormalSampler

            sampler = SobolQMCNormalSampler(sample_shape=torch.Size([int(st["mc_samples"])]))
        acqf = qLogExpectedImprovement(model, best_f=Y.max(), sampler=sampler, X_pending=X_pending)

        def snap(Xc: Any) -> Any:
            return torch.as_tensor(enc.snap(Xc.detach().numpy()), **tk)

        bounds = torch.stack([torch.zeros(enc.dim, **tk), torch.ones(enc.dim, **tk)])
        options = {} if st["maxiter"] is None else {"maxiter": int(st["maxiter"])}
        try:
            cands, values = optimize_acqf(acqf, bounds, q=1, num_restarts=int(st["num_restarts"]),
                                          raw_samples=int(st["raw_samples"]), options=options,
                                          post_processing_func=snap if enc.needs_snap else None,
                                          return_best_only=False)
        except (NotPSDError, NanError) as exc:
            info.update(phase="fallback", error=type(exc).__name__)
            return None, info
        t2, c2 = time.perf_counter(), time.process_time()
        self.last_timing = {"fit_s": t1 - t0, "acq_s": t2 - t1, "fit_cpu_s": c1 - c0, "acq_cpu_s": c2 - c1}
        # the best start whose point is new (neither evaluated nor running); else the best one
        seen = {self.space.key(c) for c in configs} | {self.space.key(c) for c in busy}
        decoded = enc.decode(cands.reshape(-1, enc.dim).numpy())
        order = torch.argsort(values.reshape(-1), descending=True).tolist()
        pick = next((k for k in order if self.space.key(decoded[k]) not in seen), order[0])
        value = float(values.reshape(-1)[pick])
        if np.isfinite(value):
            info["log_ei"] = value
        return decoded[pick], info
