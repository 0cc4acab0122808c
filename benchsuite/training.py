"""The one PyTorch training harness of the suite's live networks.

Every live network (NAS-Bench-201 cells, COMBO's NAS cell, NASBOT's MLPs and CNNs,
DeepArchitect) trains through :func:`train`:

* **Data** come as an :class:`~benchsuite.datasets.ArraySplits` of numpy arrays. Each part
  is put on the device once per run and normalised there with the split's per-channel
  mean/std (uint8 NHWC images become float NCHW; (N, H, W) grey images get one channel;
  tabular (N, D) inputs are standardised per column). Nothing is converted per batch.
* **Seeding**: ``seed`` is split with ``numpy.random.SeedSequence`` into a torch stream and a
  data stream. ``build()`` runs after torch is seeded, so weight initialisation (and dropout)
  is seeded; the caller's global torch random state is saved and restored around the run
  (``torch.random.fork_rng``). Shuffling and augmentation draw from a numpy Generator.
  On CPU, the same seed and thread count give a bit-identical curve; on CUDA, cuDNN's
  kernel choice makes runs close but not bit-identical.
* **Fidelity** is the number of epochs (``settings.epochs``), or, when ``settings.iterations``
  is set, the number of SGD steps (NASBOT's fidelity, nasbot.txt Sec. 5: "20K batch
  iterations"): batches are then drawn from successive shuffled passes over the training
  data (the last pass partial), and the validation set is scored every ``eval_every`` steps
  (default: once per pass) and after the last step; the curve has one entry per scoring,
  with ``"iteration"`` (steps so far) and ``"epoch"`` (passes so far, fractional).
  **Cost** is the measured wall seconds of the whole call (model build, data placement,
  training and evaluation), except torch's one-time start-up in a process (see
  :func:`_warm_up`), which no trial is charged for.
* **Schedule** ``"cosine"`` anneals the learning rate per iteration, from ``lr`` at the first
  step to 0 at the end of the last epoch (NAS-Bench-201's schedule, eta_min = 0); the curve
  records the rate reached at the end of every epoch, so the last one is 0. ``"constant"``
  keeps ``lr``. ``"step"`` is piecewise constant: ``lr * lr_factors[k]`` from iteration
  ``lr_milestones[k]`` on (NASBOT's CIFAR-10 schedule). An early stop does not shorten the
  schedule's horizon.
* **Several outputs**: a model whose forward pass returns a tuple or list of outputs in
  training mode (several decision layers, as NASBOT's CNNs with more than one softmax) is
  trained on the sum of the outputs' losses (the authors' ``cifar10_myMain._loss_fn``);
  in evaluation mode it must return one combined output.
* **Early stopping** (``early_stop_window`` = w, combo.txt Supp. 4.4.2): stop after epoch e
  when the validation accuracy is below that of epoch e - w (for regression: the validation
  MSE is above it). The reported loss is the last epoch's.
* **Mixed precision** on CUDA only: bf16 autocast where supported, else fp16 autocast with a
  gradient scaler. CPU runs are always float32.
* **Failures**: a non-finite (or above ``max_loss``) training loss, non-finite validation
  outputs, or any exception while building or training (out of memory, shape errors) end the
  run with ``failed=True``, NaN loss and the reason; the curve so far is kept. Errors a user
  causes (:class:`~benchsuite.errors.BenchsuiteError`, for example a bad setting) still raise.

Losses: classification = fraction misclassified (validation "error"), trained with cross
entropy; regression = mean squared error in the labels' units, trained with MSE (or with the
absolute error, ``regression_loss="l1"``, as NASBOT's MLP code; scored with MSE either way).
"""
from __future__ import annotations

import gc
import logging
import math
import time
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

import numpy as np
import torch
import torch.nn.functional as F

from .benchmark import Result
from .datasets import ArraySplits
from .errors import BenchsuiteError, InvalidSettingError

log = logging.getLogger(__name__)

OPTIMIZERS = ("sgd", "adam")
SCHEDULES = ("cosine", "constant", "step")
REGRESSION_LOSSES = ("mse", "l1")
TASKS = ("classification", "regression")
AMP_DTYPES = ("auto", "bf16", "fp16")
CROP_PAD = 4  # random-crop padding in pixels (the usual CIFAR augmentation)


@dataclass(frozen=True)
class TrainSettings:
    """How to train: epochs or iterations (the fidelity), optimizer, schedule, augmentation, device, precision."""

    epochs: int
    batch_size: int = 256
    optimizer: str = "sgd"          # "sgd" | "adam"
    lr: float = 0.1
    momentum: float = 0.9
    nesterov: bool = True
    weight_decay: float = 5e-4
    schedule: str = "cosine"        # "cosine" (per iteration, to 0 at the end of the last epoch) | "constant"
    augment: bool = False           # random crop (pad 4) + horizontal flip, images only
    early_stop_window: int | None = None  # COMBO rule: stop when val accuracy < val accuracy `window` epochs ago
    task: str = "classification"    # | "regression" (MSE)
    device: str = "auto"            # "auto" = cuda when available else cpu; "cpu"/"cuda"/"cuda:N" override
    amp: bool = True                # mixed precision on CUDA only; ignored on CPU
    threads: int | None = None      # torch intra-op threads on CPU (None: leave as is)
    eval_test: bool = False         # also score x_test at the end
    eval_batch_size: int = 1024     # batch size of evaluation (no gradients, so larger)
    max_loss: float = 1e6           # an epoch's mean training loss above this counts as diverged
    amp_dtype: str = "auto"         # "auto" (bf16 where supported, else fp16) | "bf16" | "fp16"
    adam_betas: tuple[float, float] = (0.9, 0.999)
    iterations: int | None = None   # SGD steps; when set, replaces epochs as the length of the run
    eval_every: int | None = None   # with iterations: score the validation set every this many steps
    lr_milestones: tuple[int, ...] = ()    # schedule "step": iterations where the rate changes ...
    lr_factors: tuple[float, ...] = ()     # ... to lr * lr_factors[k]
    regression_loss: str = "mse"    # training loss of regression: "mse" | "l1" (the score is MSE either way)

    def __post_init__(self) -> None:
        def bad(msg: str) -> None:
            raise InvalidSettingError(f"training settings: {msg}")

        if not isinstance(self.epochs, (int, np.integer)) or self.epochs < 1:
            bad(f"epochs must be a positive integer, got {self.epochs!r}")
        if self.batch_size < 1 or self.eval_batch_size < 1:
            bad(f"batch sizes must be positive, got {self.batch_size} and {self.eval_batch_size}")
        if self.optimizer not in OPTIMIZERS:
            bad(f"optimizer {self.optimizer!r} unknown; use one of {list(OPTIMIZERS)}")
        if self.schedule not in SCHEDULES:
            bad(f"schedule {self.schedule!r} unknown; use one of {list(SCHEDULES)}")
        if self.task not in TASKS:
            bad(f"task {self.task!r} unknown; use one of {list(TASKS)}")
        if self.amp_dtype not in AMP_DTYPES:
            bad(f"amp_dtype {self.amp_dtype!r} unknown; use one of {list(AMP_DTYPES)}")
        if not (self.lr >= 0 and self.weight_decay >= 0 and self.momentum >= 0):
            bad("lr, weight_decay and momentum must be non-negative")
        if self.early_stop_window is not None and self.early_stop_window < 1:
            bad(f"early_stop_window must be None or >= 1, got {self.early_stop_window}")
        if self.threads is not None and self.threads < 1:
            bad(f"threads must be None or >= 1, got {self.threads}")
        for name in ("iterations", "eval_every"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, (int, np.integer)) or v < 1):
                bad(f"{name} must be None or a positive integer, got {v!r}")
        if self.eval_every is not None and self.iterations is None:
            bad("eval_every needs iterations (epoch runs are scored once per epoch)")
        if self.regression_loss not in REGRESSION_LOSSES:
            bad(f"regression_loss {self.regression_loss!r} unknown; use one of {list(REGRESSION_LOSSES)}")
        ms, fs = tuple(self.lr_milestones), tuple(self.lr_factors)
        if len(ms) != len(fs):
            bad(f"lr_milestones and lr_factors must have the same length, got {len(ms)} and {len(fs)}")
        if any(b <= a for a, b in zip(ms, ms[1:])) or any(m < 0 for m in ms) or any(not f >= 0 for f in fs):
            bad("lr_milestones must increase and be >= 0, lr_factors must be >= 0")
        if self.schedule == "step" and not ms:
            bad("schedule 'step' needs lr_milestones and lr_factors")
        object.__setattr__(self, "lr_milestones", tuple(int(m) for m in ms))
        object.__setattr__(self, "lr_factors", tuple(float(f) for f in fs))


@dataclass
class TrainOutcome:
    """What one training run gave: final validation loss, per-epoch curve, measured cost, failure."""

    val_loss: float      # final validation error (fraction misclassified) or MSE for regression; NaN when failed
    curve: list[dict]    # per epoch (or scoring): {"epoch", "train_loss", "val_loss", "seconds" (cumulative), "lr"[, "iteration"]}
    seconds: float       # measured wall seconds of the whole run (the cost)
    failed: bool
    reason: str          # why it failed ("diverged: train loss nan at epoch 3", "RuntimeError: ...")
    n_params: int
    device: str
    epochs_run: int      # epochs run; with iterations: the number of validation scorings
    test_loss: float | None = None
    best_val_loss: float = math.nan   # lowest validation loss over the epochs run
    precision: str = "fp32"           # "fp32", "bf16" or "fp16" (autocast)
    stopped_early: bool = False
    iterations_run: int = 0           # SGD steps taken
    cpu_threads: int | None = None    # torch's intra-op threads during a CPU run (None on a GPU)

    def to_result(self, extra: dict | None = None) -> Result:
        """A :class:`Result` (loss = final validation loss, cost = seconds) with the curve in ``info``."""
        info: dict[str, Any] = {"curve": self.curve, "n_params": self.n_params, "device": self.device,
                                "epochs_run": self.epochs_run, "precision": self.precision}
        if self.cpu_threads is not None:
            info["cpu_threads"] = self.cpu_threads
        if self.stopped_early:
            info["stopped_early"] = True
        if self.test_loss is not None:
            info["test_loss"] = self.test_loss
        if extra:
            info.update(extra)
        if self.failed:
            failed = Result.failure(self.seconds, self.reason)
            return replace(failed, info={**info, **failed.info})
        return Result(loss=self.val_loss, cost_s=self.seconds, info=info)


def pick_device(pref: str = "auto") -> torch.device:
    """The torch device for ``pref``: "auto" (cuda when available, else cpu), "cpu", "cuda" or "cuda:N"."""
    if pref == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if pref == "cpu":
        return torch.device("cpu")
    if pref == "cuda" or pref.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise InvalidSettingError(f"device {pref!r} asked for, but CUDA is not available on this machine; "
                                      "use device 'auto' or 'cpu'")
        dev = torch.device(pref)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise InvalidSettingError(f"device {pref!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
        return dev
    raise InvalidSettingError(f"device {pref!r} unknown; use 'auto', 'cpu', 'cuda' or 'cuda:N'")


def count_parameters(model: torch.nn.Module) -> int:
    """Number of trainable parameters (not yet materialised lazy parameters count as 0)."""
    total = 0
    for p in model.parameters():
        if p.requires_grad and not isinstance(p, torch.nn.parameter.UninitializedParameter):
            total += p.numel()
    return int(total)


def should_stop_early(val_losses: list[float], window: int | None) -> bool:
    """COMBO's rule: the latest validation loss is worse than the one ``window`` epochs before."""
    if not window or len(val_losses) <= window:
        return False
    return val_losses[-1] > val_losses[-1 - window]


def cosine_lr(lr: float, step: int, total_steps: int) -> float:
    """Cosine-annealed rate after ``step`` of ``total_steps`` iterations: ``lr`` at 0, 0 at the end."""
    return 0.5 * lr * (1.0 + math.cos(math.pi * min(step, total_steps) / max(total_steps, 1)))


def step_lr(lr: float, step: int, milestones: tuple[int, ...], factors: tuple[float, ...]) -> float:
    """Piecewise-constant rate at ``step``: ``lr * factors[k]`` for the last milestone ``k`` reached, else ``lr``."""
    rate = lr
    for m, f in zip(milestones, factors):
        if step >= m:
            rate = lr * f
    return rate


def _lr_at(st: TrainSettings, step: int, total_steps: int) -> float:
    if st.schedule == "cosine":
        return cosine_lr(st.lr, step, total_steps)
    if st.schedule == "step":
        return step_lr(st.lr, step, st.lr_milestones, st.lr_factors)
    return st.lr


# -- internals ---------------------------------------------------------------------------------
class _Diverged(Exception):
    """Training left the finite range; the message is the failure reason."""


@dataclass
class _Progress:
    """What survives a failure: the curve so far and the counters."""

    curve: list[dict] = field(default_factory=list)
    n_params: int = 0
    epochs_run: int = 0
    iterations_run: int = 0
    best: float = math.nan
    test_loss: float | None = None
    stopped_early: bool = False


_WARM: set[str] = set()


def _warm_up(device: torch.device) -> None:
    """Pay torch's one-time start-up costs on ``device`` outside the measured time.

    The first ``optimizer.step()`` of a process imports torch's compiler stack (3-5 s on our
    machines) and the first CUDA call creates the context; without this, the first trial of
    every run would be charged for them.
    """
    if str(device) in _WARM:
        return
    p = torch.nn.Parameter(torch.zeros(1, device=device))
    p.grad = torch.zeros(1, device=device)
    torch.optim.SGD([p], lr=0.0, momentum=0.9, nesterov=True).step()
    torch.optim.Adam([p], lr=0.0).step()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    _WARM.add(str(device))


def _seeds(seed: int) -> tuple[int, np.random.Generator]:
    torch_ss, data_ss = np.random.SeedSequence(seed).spawn(2)
    words = torch_ss.generate_state(2, dtype=np.uint32)
    torch_seed = (int(words[0]) << 31) ^ int(words[1])  # < 2**63, accepted by every torch generator
    return torch_seed, np.random.default_rng(data_ss)


@contextmanager
def _seeded_torch(torch_seed: int, device: torch.device) -> Iterator[None]:
    """Seed torch for the run and give the caller its random state back afterwards."""
    if device.type == "cuda":
        with torch.random.fork_rng(devices=list(range(torch.cuda.device_count()))):
            torch.manual_seed(torch_seed)
            yield
    else:
        # CPU only: seeding just the CPU generator leaves CUDA (if any) untouched and uninitialised
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(torch_seed)
            yield


def _to_device(x: np.ndarray, mean: np.ndarray, std: np.ndarray, device: torch.device) -> torch.Tensor:
    """One split part as a normalised float32 tensor on ``device`` (images NHWC -> NCHW)."""
    arr = np.ascontiguousarray(x)
    if not arr.flags.writeable:  # torch warns on read-only numpy memory (the shared data caches)
        arr = arr.copy()
    t = torch.from_numpy(arr).to(device)
    if arr.ndim == 4:
        t = t.permute(0, 3, 1, 2)
        shape: tuple[int, ...] = (1, -1, 1, 1)
    elif arr.ndim == 3:
        t = t.unsqueeze(1)
        shape = (1, -1, 1, 1)
    else:
        shape = (1, -1) if arr.ndim == 2 else (-1,)
    m = torch.as_tensor(np.asarray(mean, dtype=np.float32), device=device).reshape(shape)
    s = torch.as_tensor(np.asarray(std, dtype=np.float32), device=device).reshape(shape)
    return ((t.float() - m) / s).contiguous()


def _labels(y: np.ndarray, task: str, device: torch.device) -> torch.Tensor:
    if task == "classification":
        if not np.issubdtype(np.asarray(y).dtype, np.integer):
            raise InvalidSettingError("classification needs integer labels; use task='regression' for real targets")
        arr = np.asarray(y, dtype=np.int64)
    else:
        arr = np.asarray(y, dtype=np.float32)
    if not arr.flags.writeable:  # torch warns on read-only numpy memory (the shared data caches)
        arr = arr.copy()
    return torch.as_tensor(arr, device=device)


def _augment(xb: torch.Tensor, black: torch.Tensor, rng: np.random.Generator) -> torch.Tensor:
    """Random crop of the image padded by CROP_PAD black pixels, then a random horizontal flip."""
    b, c, h, w = xb.shape
    p = CROP_PAD
    dev = xb.device
    padded = black.reshape(1, c, 1, 1).expand(b, c, h + 2 * p, w + 2 * p).clone()
    padded[:, :, p:p + h, p:p + w] = xb
    draws = torch.from_numpy(np.stack([rng.integers(0, 2 * p + 1, b), rng.integers(0, 2 * p + 1, b),
                                       rng.integers(0, 2, b)])).to(dev)
    rows = draws[0][:, None] + torch.arange(h, device=dev)
    cols = draws[1][:, None] + torch.arange(w, device=dev)
    cols = torch.where(draws[2][:, None].bool(), cols.flip(1), cols)  # flipping = reading columns backwards
    return padded[torch.arange(b, device=dev)[:, None, None, None], torch.arange(c, device=dev)[None, :, None, None],
                  rows[:, None, :, None], cols[:, None, None, :]]


def _loss(out: Any, yb: torch.Tensor, task: str, regression_loss: str = "mse") -> torch.Tensor:
    if isinstance(out, (tuple, list)):  # several decision layers: the sum of their losses
        return torch.stack([_loss(o, yb, task, regression_loss) for o in out]).sum()
    out = out.float()
    if task == "classification":
        return F.cross_entropy(out, yb)
    if regression_loss == "l1":
        return F.l1_loss(out.reshape(yb.shape), yb)
    return F.mse_loss(out.reshape(yb.shape), yb)


def _evaluate(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, task: str, batch_size: int,
              autocast: Callable[[], Any]) -> float:
    """Validation error (classification) or MSE on (x, y); NaN when the outputs are not finite."""
    model.eval()
    total = torch.zeros((), dtype=torch.float64, device=x.device)
    finite = torch.ones((), dtype=torch.bool, device=x.device)
    with torch.no_grad():
        for i in range(0, x.shape[0], batch_size):
            with autocast():
                out = model(x[i:i + batch_size])
            out = out.float()
            yb = y[i:i + batch_size]
            finite &= torch.isfinite(out).all()
            if task == "classification":
                total += (out.argmax(dim=1) != yb).sum()
            else:
                total += ((out.reshape(yb.shape) - yb) ** 2).sum()
    model.train()
    if not bool(finite):
        return math.nan
    denom = y.numel() if task == "regression" else y.shape[0]
    return float(total) / max(denom, 1)


def _precision(settings: TrainSettings, device: torch.device) -> str:
    if device.type != "cuda" or not settings.amp:
        return "fp32"
    if settings.amp_dtype == "fp16":
        return "fp16"
    if settings.amp_dtype == "bf16" or torch.cuda.is_bf16_supported():
        return "bf16"
    return "fp16"


def _run(build: Callable[[], torch.nn.Module], data: ArraySplits, settings: TrainSettings, device: torch.device,
         precision: str, rng: np.random.Generator, t0: float, state: _Progress,
         say: Callable[[str], None]) -> float:
    """The training loop; returns the final validation loss, raises on failure (state keeps the curve)."""
    st = settings
    model = build()
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"build() returned {type(model).__name__}, not a torch.nn.Module")
    model = model.to(device)
    state.n_params = count_parameters(model)

    x_tr = _to_device(data.x_train, data.mean, data.std, device)
    y_tr = _labels(data.y_train, st.task, device)
    x_va = _to_device(data.x_val, data.mean, data.std, device)
    y_va = _labels(data.y_val, st.task, device)
    images = x_tr.ndim == 4
    if st.augment and not images:
        raise InvalidSettingError("augment=True needs image inputs (N, H, W, C)")
    # black (pixel value 0) after normalisation: what padding adds around a raw image
    black = (-torch.as_tensor(np.asarray(data.mean, np.float32), device=device)
             / torch.as_tensor(np.asarray(data.std, np.float32), device=device)) if st.augment else None

    params = [p for p in model.parameters() if p.requires_grad]
    if st.optimizer == "sgd":
        opt: torch.optim.Optimizer = torch.optim.SGD(
            params, lr=st.lr, momentum=st.momentum, nesterov=st.nesterov and st.momentum > 0,
            weight_decay=st.weight_decay)
    else:
        opt = torch.optim.Adam(params, lr=st.lr, betas=st.adam_betas, weight_decay=st.weight_decay)
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)

    def autocast() -> Any:
        return torch.autocast("cuda", dtype=amp_dtype) if amp_dtype is not None else nullcontext()

    scaler = torch.amp.GradScaler("cuda") if precision == "fp16" else None

    n = x_tr.shape[0]
    starts = list(range(0, n, st.batch_size))
    if len(starts) > 1 and n - starts[-1] < 2:
        starts.pop()  # a last batch of one image breaks batch norm in training mode
    per_pass = len(starts)
    by_iter = st.iterations is not None
    if by_iter:
        total_steps = int(st.iterations)
        every = int(st.eval_every or per_pass)
        n_evals = -(-total_steps // every)
    else:
        total_steps = st.epochs * per_pass
        every = per_pass
        n_evals = st.epochs
    step = 0
    check_each_step = device.type == "cpu"  # a free check on CPU; on CUDA it would sync every step
    vals: list[float] = []
    what = "error" if st.task == "classification" else "mse"
    loss_sum = torch.zeros((), dtype=torch.float64, device=device)
    seen = 0
    n_pass = 0
    model.train()
    while step < total_steps:
        n_pass += 1
        perm = torch.from_numpy(rng.permutation(n)).to(device)
        for start in starts:
            if step >= total_steps:
                break
            # what the messages call the epoch: the pass (epochs) or the scoring round (iterations)
            epoch = n_pass if not by_iter else len(vals) + 1
            idx = perm[start:start + st.batch_size]
            xb, yb = x_tr[idx], y_tr[idx]
            if st.augment:
                xb = _augment(xb, black, rng)
            if st.schedule != "constant":
                for g in opt.param_groups:
                    g["lr"] = _lr_at(st, step, total_steps)
            with autocast():
                out = model(xb)
            loss = _loss(out, yb, st.task, st.regression_loss)
            opt.zero_grad(set_to_none=True)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            step += 1
            loss_sum += loss.detach().double() * yb.shape[0]
            seen += yb.shape[0]
            if check_each_step and not math.isfinite(loss.item()):
                where = f"iteration {step}" if by_iter else f"epoch {epoch}"
                raise _Diverged(f"diverged: train loss {loss.item()} at {where}")
            if step % every and step != total_steps:
                continue
            # a scoring point: the end of an epoch, or every `every` iterations and the last one
            train_loss = float(loss_sum) / max(seen, 1)
            where = f"iteration {step}" if by_iter else f"epoch {epoch}"
            if not math.isfinite(train_loss) or train_loss > st.max_loss:
                raise _Diverged(f"diverged: train loss {train_loss:g} at {where}")
            val = _evaluate(model, x_va, y_va, st.task, st.eval_batch_size, autocast)
            if not math.isfinite(val):
                raise _Diverged(f"diverged: validation outputs not finite at {where}")
            vals.append(val)
            state.best = min(vals)
            state.epochs_run = len(vals)
            state.iterations_run = step
            seconds = time.perf_counter() - t0
            entry = {"epoch": epoch if not by_iter else round(step / per_pass, 4), "train_loss": train_loss,
                     "val_loss": val, "seconds": seconds, "lr": _lr_at(st, step, total_steps)}
            if by_iter:
                entry["iteration"] = step
            state.curve.append(entry)
            loss_sum = torch.zeros((), dtype=torch.float64, device=device)
            seen = 0
            at = f"iteration {step}/{total_steps}" if by_iter else f"epoch {epoch}/{n_evals}"
            say(f"{at}: train loss {train_loss:.4f}, val {what} {val:.4f}, {seconds:.1f} s")
            if should_stop_early(vals, st.early_stop_window):
                state.stopped_early = True
                say(f"early stop after {where}: val {what} {val:.4f} is worse than "
                    f"{vals[-1 - st.early_stop_window]:.4f} {st.early_stop_window} {'scorings' if by_iter else 'epochs'} before")
                break
        if state.stopped_early:
            break
    state.n_params = count_parameters(model)  # lazy modules are materialised by now
    if st.eval_test and data.x_test is not None and data.y_test is not None and len(data.y_test):
        x_te = _to_device(data.x_test, data.mean, data.std, device)
        y_te = _labels(data.y_test, st.task, device)
        state.test_loss = _evaluate(model, x_te, y_te, st.task, st.eval_batch_size, autocast)
    return vals[-1]


def train(build: Callable[[], torch.nn.Module], data: ArraySplits, settings: TrainSettings, seed: int,
          progress: Callable[[str], None] | None = None) -> TrainOutcome:
    """Train ``build()`` on ``data`` for ``settings.epochs`` epochs (or ``settings.iterations`` steps); never raises for a failed run.

    A diverging run or an exception inside training gives ``failed=True`` with the reason;
    invalid settings or data (user errors) raise :class:`~benchsuite.errors.BenchsuiteError`.
    """
    device = pick_device(settings.device)
    _warm_up(device)
    t0 = time.perf_counter()
    if len(data.y_train) < 1 or len(data.y_val) < 1:
        raise InvalidSettingError(f"training needs at least one training and one validation row, "
                                  f"got {len(data.y_train)} and {len(data.y_val)}")
    say = progress if progress is not None else log.info
    precision = _precision(settings, device)
    torch_seed, rng = _seeds(seed)
    state = _Progress()
    failure = ""
    val_loss = math.nan
    prev_threads = torch.get_num_threads()
    cpu_threads: int | None = None
    prev_benchmark = torch.backends.cudnn.benchmark
    try:
        if settings.threads is not None and device.type == "cpu":
            torch.set_num_threads(settings.threads)
        cpu_threads = torch.get_num_threads() if device.type == "cpu" else None
        if device.type == "cuda":
            torch.backends.cudnn.benchmark = True  # many epochs of the same shapes: autotuning pays
        with _seeded_torch(torch_seed, device):
            try:
                val_loss = _run(build, data, settings, device, precision, rng, t0, state, say)
            except BenchsuiteError:
                raise
            except _Diverged as exc:
                failure = str(exc)
            except Exception as exc:  # noqa: BLE001 - any crash of a trial is recorded, not raised
                first = (str(exc).strip().splitlines() or [""])[0]
                failure = f"{type(exc).__name__}: {first}"[:500]
        if device.type == "cuda":
            try:
                if failure:
                    gc.collect()  # the failed run's tensors are unreachable now; give their memory back
                    torch.cuda.empty_cache()
                torch.cuda.synchronize(device)
            except RuntimeError as exc:  # an asynchronous CUDA error surfaces here
                first = (str(exc).strip().splitlines() or [""])[0]
                failure = failure or f"{type(exc).__name__}: {first}"[:500]
    finally:
        if torch.get_num_threads() != prev_threads:
            torch.set_num_threads(prev_threads)
        torch.backends.cudnn.benchmark = prev_benchmark
    seconds = time.perf_counter() - t0
    if failure:
        say(f"training failed: {failure}")
        val_loss = math.nan
    return TrainOutcome(val_loss=val_loss, curve=state.curve, seconds=seconds, failed=bool(failure), reason=failure,
                        n_params=state.n_params, device=str(device), epochs_run=state.epochs_run,
                        test_loss=None if failure else state.test_loss, best_val_loss=state.best,
                        precision=precision, stopped_early=state.stopped_early,
                        iterations_run=state.iterations_run, cpu_threads=cpu_threads)
