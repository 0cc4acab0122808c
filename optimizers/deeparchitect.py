"""DeepArchitect's four searchers (deeparchitect.txt Sec. 6.3 and 7.2) as optimizer plugins.

They work on any space written in the DeepArchitect language, that is any architecture space
with ``walk(choose)``: the space is traversed in its deterministic order and, at every
unassigned independent hyperparameter, ``choose(position, name, values)`` returns the index
of the value to assign (deeparchitect.txt Sec. 6.2-6.3, Algorithm 2's iterator). A searcher
is thus a policy for these choices, written once for every space:

* ``da_random``: every choice uniform (Algorithm 3).
* ``da_mcts``: Monte Carlo tree search with UCT over the sequence of choices, exploration
  term 0.33 (Sec. 7.2; the authors' ``deep_architect/searchers/mcts.py``).
* ``da_smbo``: a linear surrogate on hashed features of the architecture; with probability
  0.1 a random architecture, otherwise the best of 512 random ones by the surrogate
  (Sec. 7.2; the authors' ``searchers/smbo_random.py`` and ``surrogates/hashing.py``).
* ``da_evolution``: regularized evolution, population 100, tournament sample 25 (Sec. 7.2;
  the authors' ``searchers/regularized_evolution.py``).

The authors' searchers maximise validation accuracy; the suite minimises a loss. Every
searcher here uses the score ``-loss``: with the validation error as the loss (the live
DeepArchitect benchmark and the NAS-Bench-201 tables) that is the accuracy minus 1, and
UCT's choices, the ridge surrogate's ranking and the tournament's winner are all unchanged
by adding a constant, so the searchers decide exactly as on accuracies.

Asynchronous workers (the authors ran one evaluation at a time per searcher state): the
pending trials are used so that a searcher does not propose an architecture that is still
being evaluated where it can avoid it (MCTS counts them as visits in progress; SMBO and
evolution skip candidates equal to a pending one). With one worker nothing changes.

A walk can end in an architecture the space's own rules reject (``space.is_valid``: a Nasbench
cell without an input-output path); every searcher redraws such a proposal, as the authors'
searchers do (their MCTS catches the space's error and samples again).

Randomness comes only from the plugin's numpy Generator and feature hashing uses CRC-32,
never Python's salted ``hash()`` (the authors' ``HashingSurrogate`` calls ``hash(f)``, which
differs between processes for strings): the same seed gives the same run in any process.
"""
from __future__ import annotations

import math
import zlib
from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from benchsuite.benchmark import Fidelity, Result
from benchsuite.errors import UnsupportedError
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion, Trial
from benchsuite.settings import NONNEGATIVE, POSITIVE, POSITIVE_INT, UNIT, Setting, require_at_most
from benchsuite.space import SearchSpace

# a decision of a walk: (hyperparameter name, its values, the index chosen)
Decision = tuple[str, tuple, int]
Choose = Callable[[int, str, tuple], int]

MCTS_EXPLORATION = 0.33  # deeparchitect.txt Sec. 7.2
SMBO_SAMPLES = 512  # Sec. 7.2 (authors' examples: 'smbo_optimizer=rand_samples=512')
SMBO_EXPLORATION_PROB = 0.1  # Sec. 7.2
HASH_SIZE = 2048  # authors' examples/*/searchers.py: HashingSurrogate(2048, 1)
REFIT_INTERVAL = 1  # ibid.: the surrogate is refitted after every evaluation
RIDGE_ALPHA = 1e-5  # authors' surrogates/hashing.py: weight_decay_coeff=1e-5 (sklearn Ridge alpha)
POPULATION = 100  # Sec. 7.2
TOURNAMENT = 25  # Sec. 7.2
ROWS_MEMO = 50_000  # configurations whose feature buckets an SMBO run remembers (the NB201 cell has 15,625)
RETRIES = 20  # how often a proposal equal to a pending trial is redrawn before it is accepted
FEASIBLE_TRIES = 1000  # draws before an infeasible proposal is returned anyway (the benchmark then fails it)


def walk_recorded(space: SearchSpace, choose: Choose) -> tuple[Any, list[Decision]]:
    """Walk ``space`` with ``choose`` and return the configuration and the decisions taken."""
    trace: list[Decision] = []

    def rec(position: int, name: str, values: tuple) -> int:
        i = int(choose(position, name, values))
        trace.append((name, tuple(values), i))
        return i

    return space.walk(rec), trace


def random_walk(space: SearchSpace, rng: np.random.Generator) -> tuple[Any, list[Decision]]:
    """Algorithm 3's inner loop: a uniform value for every hyperparameter the walk meets."""
    return walk_recorded(space, lambda _p, _n, values: int(rng.integers(len(values))))


def random_draw(space: SearchSpace, rng: np.random.Generator) -> tuple[Any, list[Decision]]:
    """A uniform architecture (Algorithm 3, infeasible ones redrawn) and its decisions.

    A DeepArchitect space (``hyperparameters(values)`` gives each position's name and
    domain) draws with its own ``sample``, which skips infeasible prefixes without building
    graphs (Nasbench: under 1 % of uniform walks are feasible; the distribution over feasible
    architectures is the same); other spaces are walked and the caller redraws.
    """
    if "hyperparameters" in space.capabilities:
        config = space.sample(rng)
        trace = []
        for v, (name, values) in zip(config, space.hyperparameters(config)):
            i = next(j for j, w in enumerate(values) if w == v and type(w) is type(v))
            trace.append((name, tuple(values), i))
        return config, trace
    return random_walk(space, rng)


def random_architecture(space: SearchSpace, rng: np.random.Generator) -> tuple[Any, None]:
    """:func:`random_draw`'s architecture without its decisions (the same draws from ``rng``, so the same
    architecture): SMBO and random search use only the architecture, and SMBO draws 512 per ask."""
    if "hyperparameters" in space.capabilities:
        return space.sample(rng), None
    return random_walk(space, rng)[0], None


def feature_buckets(features: Sequence[str], size: int) -> np.ndarray:
    """Stable bucket of each feature string: CRC-32 of its UTF-8 bytes modulo ``size``."""
    return np.fromiter((zlib.crc32(f.encode("utf-8")) % size for f in features), dtype=np.int64,
                       count=len(features))


class _DASearcher(Optimizer):
    """Shared parts: the capability check for the language's spaces and per-key bookkeeping."""

    supports = Capabilities(spaces={"architecture"}, fidelity="ignores", parallel=True, needs={"walk"},
                            feasible_only=True,
                            needs_hint="a space written in the DeepArchitect language (deeparchitect_cifar10, "
                                       "da_nb201_*)", uses={"hyperparameters"})

    def _pending_keys(self, pending: Sequence[Trial]) -> set[Hashable]:
        return {self.space.key(t.config) for t in pending}

    def _propose(self, draw: Callable[[], tuple[Any, Any]], busy: set[Hashable] | frozenset = frozenset()
                 ) -> tuple[Any, Any]:
        """Call ``draw`` until it gives a feasible architecture (``space.is_valid``: a walk can end in
        one the space's rules reject, like a Nasbench cell without a path; the authors' searchers
        redraw those, ``mcts.py`` catching the space's ValueError) that is not pending (at most
        ``RETRIES`` redraws for that)."""
        n_busy, fallback, out = 0, None, None
        for _ in range(FEASIBLE_TRIES):
            out = draw()
            if not self.space.is_valid(out[0]):
                continue
            if n_busy < RETRIES and self.space.key(out[0]) in busy:
                n_busy += 1
                fallback = fallback or out
                continue
            return out
        return fallback or out  # type: ignore[return-value]

    def _score(self, result: Result) -> float:
        """The authors' searchers maximise accuracy; ours maximise -loss (see the module docstring)."""
        return -float(result.loss)


class DARandom(_DASearcher):
    """Random search over the language's hyperparameters (deeparchitect.txt Algorithm 3)."""

    name = "da_random"
    description = "DeepArchitect random search: uniform value at every hyperparameter of the walk (Algorithm 3)"

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        config, _ = self._propose(lambda: random_architecture(self.space, self.rng))
        return Suggestion(config, self.full_fidelity())


class _Node:
    """One node of the MCTS tree: statistics of the walks through it and its children."""

    __slots__ = ("n", "total", "pending", "children")

    def __init__(self) -> None:
        self.n = 0  # finished walks through this node
        self.total = 0.0  # sum of their scores
        self.pending = 0  # walks through it still being evaluated (asynchronous workers)
        self.children: list[_Node] | None = None


class DAMCTS(_DASearcher):
    """Monte Carlo tree search with UCT over the walk's choices (deeparchitect.txt Sec. 7.2).

    As in the authors' ``MCTSSearcher``: a tree node is a prefix of choices and has one child
    per value of the next hyperparameter. A walk descends the expanded part of the tree by
    UCT, ``mean + c * sqrt(2 ln N / n)`` with ``c = 0.33`` (Sec. 7.2), where an unvisited
    child scores infinity (every child is tried before any is exploited) and ties are broken
    uniformly at random; at the first leaf it expands the node (one child per value), takes a
    uniformly random child and finishes the walk with uniform random choices (the rollout).
    The score of the evaluation (``-loss``, raw as the authors back up raw validation
    accuracies) is added to the root and to every tree node on the path.

    Additions for the suite: trials still running count as visits in progress in the UCT
    counts (``n + pending``; a node with only pending visits takes its parent's mean), so
    parallel workers spread over the untried children instead of repeating one, and a walk
    that ends at a pending architecture is redrawn (up to 20 times). A failed trial backs up
    the worst score seen so far (nothing when nothing succeeded yet), so that a failing
    branch is not retried as if unvisited.
    """

    name = "da_mcts"
    description = "DeepArchitect MCTS: UCT over the walk's choices (exploration 0.33), random rollouts"
    # not feasible_only: redraws do not change the tree, so where UCT's descent leads only to walks the space
    # rejects, the 1,000th redraw is proposed anyway; the benchmark fails it and its worst score moves UCT on
    supports = replace(_DASearcher.supports, feasible_only=False)
    settings_spec = {
        "exploration": Setting(MCTS_EXPLORATION, "UCT exploration term c (deeparchitect.txt Sec. 7.2: 0.33)",
                               type=float, domain=NONNEGATIVE),
    }

    def setup(self) -> None:
        self.root = _Node()
        self._paths: dict[Hashable, deque[list[int]]] = {}  # key -> tree paths of its asked, untold walks
        self._worst: float | None = None

    def _nodes(self, path: list[int]) -> list[_Node]:
        out, node = [self.root], self.root
        for i in path:
            node = node.children[i]  # type: ignore[index]
            out.append(node)
        return out

    def _best_child(self, node: _Node) -> int:
        kids = node.children
        assert kids is not None
        parent_n = node.n + node.pending
        log_n = math.log(parent_n) if parent_n > 0 else 0.0
        parent_mean = node.total / node.n if node.n else 0.0
        c = self.settings["exploration"]
        scores = np.empty(len(kids))
        for j, k in enumerate(kids):
            visits = k.n + k.pending
            if visits == 0:
                scores[j] = math.inf
            else:
                mean = k.total / k.n if k.n else parent_mean
                scores[j] = mean + c * math.sqrt(2.0 * log_n / visits)
        best = np.flatnonzero(scores == scores.max())
        return int(best[0] if best.size == 1 else best[self.rng.integers(best.size)])

    def _walk(self) -> tuple[Any, list[int]]:
        path: list[int] = []
        state = {"node": self.root, "in_tree": True}

        def choose(_pos: int, name: str, values: tuple) -> int:
            n_vals = len(values)
            node: _Node = state["node"]
            if not state["in_tree"]:
                return int(self.rng.integers(n_vals))  # rollout
            if node.children is None:  # expansion: a random child, then the rollout
                node.children = [_Node() for _ in range(n_vals)]
                i = int(self.rng.integers(n_vals))
                state["in_tree"] = False
            else:
                if len(node.children) != n_vals:
                    raise UnsupportedError(
                        f"da_mcts: hyperparameter {name!r} offered {n_vals} values where the same choices "
                        f"offered {len(node.children)} before; the space's walk is not deterministic")
                i = self._best_child(node)
                state["node"] = node.children[i]
            path.append(i)
            return i

        config = self.space.walk(choose)
        return config, path

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        paths = self._pending_paths(pending)
        self._add_pending(paths, +1)
        try:
            config, path = self._propose(self._walk, self._pending_keys(pending))
        finally:
            self._add_pending(paths, -1)
        self._paths.setdefault(self.space.key(self.space.validate(config)), deque()).append(path)
        return Suggestion(config, self.full_fidelity())

    def _pending_paths(self, pending: Sequence[Trial]) -> list[list[int]]:
        """Tree paths of the pending trials (the k-th pending copy of a key takes its k-th path)."""
        seen: dict[Hashable, int] = {}
        paths = []
        for t in pending:
            key = self.space.key(t.config)
            k = seen.get(key, 0)
            seen[key] = k + 1
            queue = self._paths.get(key)
            if queue is not None and k < len(queue):
                paths.append(queue[k])
        return paths

    def _add_pending(self, paths: list[list[int]], delta: int) -> None:
        for path in paths:
            for node in self._nodes(path):
                node.pending += delta

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        queue = self._paths.get(self.space.key(trial.config))
        if not queue:
            return
        path = queue.popleft()
        if result.failed or not math.isfinite(result.loss):
            if self._worst is None:
                return
            score = self._worst
        else:
            score = self._score(result)
            self._worst = score if self._worst is None else min(self._worst, score)
        for node in self._nodes(path):
            node.n += 1
            node.total += score


class DASMBO(_DASearcher):
    """Sequential model-based optimisation with a hashed-feature linear surrogate (Sec. 7.2).

    Features of an architecture are the space's strings (``space.features``: module sequences
    and hyperparameter values), hashed with CRC-32 into 2,048 buckets and counted (the
    authors' ``HashingSurrogate(2048, 1)``). The surrogate is ridge regression with an
    intercept and penalty 1e-5 (sklearn ``Ridge(alpha=1e-5)`` in ``surrogates/hashing.py``),
    refitted after every evaluation, predicting the score. Each ask returns, with probability
    0.1, a random architecture; otherwise it scores 512 random architectures and returns the
    one with the best prediction (the first among equals). Before the first fit the authors'
    surrogate predicts 0 for everything, so that ask is a random architecture; we return one
    directly. Candidates equal to a pending trial are skipped.
    """

    name = "da_smbo"
    description = "DeepArchitect SMBO: ridge surrogate on hashed architecture features, best of 512 samples"
    supports = Capabilities(spaces={"architecture"}, fidelity="ignores", parallel=True, needs={"walk", "features"},
                            feasible_only=True,
                            needs_hint="a space written in the DeepArchitect language (deeparchitect_cifar10, "
                                       "da_nb201_*)", uses={"hyperparameters"})
    test_settings = {"n_samples": 64}  # small: quick conformance checks
    settings_spec = {
        "n_samples": Setting(SMBO_SAMPLES, "random architectures scored per ask (Sec. 7.2: 512)", type=int,
                             domain=POSITIVE_INT),
        "exploration_prob": Setting(SMBO_EXPLORATION_PROB, "probability of a random architecture (Sec. 7.2: 0.1)",
                                    type=float, domain=UNIT),
        "hash_size": Setting(HASH_SIZE, "feature-hashing buckets (authors' HashingSurrogate: 2048)", type=int,
                             domain=POSITIVE_INT),
        "ridge_alpha": Setting(RIDGE_ALPHA, "ridge penalty of the linear surrogate (authors' code: 1e-5)",
                               type=float, domain=POSITIVE),
        "refit_interval": Setting(REFIT_INTERVAL, "refit the surrogate every this many results (authors: 1)",
                                  type=int, domain=POSITIVE_INT),
    }

    def setup(self) -> None:
        self._rows: list[np.ndarray] = []  # bucket indices of each observation
        self._y: list[float] = []
        self._w: np.ndarray | None = None
        self._b = 0.0
        self._bucket_cache: dict[str, int] = {}
        self._rows_of: dict[Hashable, np.ndarray] = {}  # typed values -> buckets (SMBO redraws the same lists)

    def buckets(self, config: Any) -> np.ndarray:
        """Bucket indices of a configuration's features (with repeats: counts add up)."""
        try:  # typed, as the space's own feature memo: True and 1 may be different values of a position
            key: Hashable = tuple((type(v), v) for v in config)
            row = self._rows_of.get(key)
        except TypeError:  # not a value list of scalars: no memo
            return self._buckets(config)
        if row is None:
            if len(self._rows_of) >= ROWS_MEMO:
                self._rows_of.clear()
            row = self._rows_of[key] = self._buckets(config)
        return row

    def _buckets(self, config: Any) -> np.ndarray:
        cache = self._bucket_cache
        feats = self.space.features(config)
        try:  # a run meets a few thousand distinct strings: after its first decisions all are known
            return np.fromiter(map(cache.__getitem__, feats), dtype=np.int64, count=len(feats))
        except KeyError:
            new = [f for f in dict.fromkeys(feats) if f not in cache]
            cache.update(zip(new, feature_buckets(new, self.settings["hash_size"]).tolist()))
            return np.fromiter(map(cache.__getitem__, feats), dtype=np.int64, count=len(feats))

    def predict(self, configs: Sequence[Any]) -> np.ndarray:
        """Surrogate scores (higher is better) of configurations; zeros before the first fit."""
        if self._w is None:
            return np.zeros(len(configs))
        w = self._w
        return np.array([self._b + float(w[self.buckets(c)].sum()) for c in configs])

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        busy = self._pending_keys(pending)
        explore = self.rng.random() < self.settings["exploration_prob"]
        draw = lambda: random_architecture(self.space, self.rng)  # noqa: E731
        if explore or self._w is None:
            config, _ = self._propose(draw, busy)
            return Suggestion(config, self.full_fidelity(), info={"smbo": "random"})
        cands, scores = [], []
        w, b = self._w, self._b
        for _ in range(self.settings["n_samples"]):
            c = self._propose(draw)[0]
            # features right after the draw, while the space still holds the walked graph
            cands.append(c)
            scores.append(b + float(w[self.buckets(c)].sum()))
        score = np.array(scores)
        free = np.array([self.space.key(c) not in busy for c in cands])
        if free.any():
            score[~free] = -np.inf
        best = int(np.argmax(score))  # first of the maxima, as the authors' strict '>'
        return Suggestion(cands[best], self.full_fidelity(), info={"smbo": "surrogate",
                                                                    "predicted": float(score[best])})

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        if result.failed or not math.isfinite(result.loss):
            return  # the authors' surrogate sees only evaluated architectures
        self._rows.append(self.buckets(trial.config))
        self._y.append(self._score(result))
        if len(self._y) % self.settings["refit_interval"] == 0:
            self._fit()

    def _design(self) -> np.ndarray:
        x = np.zeros((len(self._rows), self.settings["hash_size"]))
        for r, idx in enumerate(self._rows):
            np.add.at(x[r], idx, 1.0)
        return x

    def _fit(self) -> None:
        """Ridge regression with an unpenalised intercept (sklearn Ridge's objective), exactly."""
        x, y, alpha = self._design(), np.asarray(self._y), self.settings["ridge_alpha"]
        xm, ym = x.mean(axis=0), y.mean()
        xc, yc = x - xm, y - ym
        n, d = xc.shape
        if n <= d:  # dual form: w = Xc' (Xc Xc' + alpha I)^-1 yc, an n x n system
            k = xc @ xc.T
            k[np.diag_indices_from(k)] += alpha
            w = xc.T @ np.linalg.solve(k, yc)
        else:
            g = xc.T @ xc
            g[np.diag_indices_from(g)] += alpha
            w = np.linalg.solve(g, xc.T @ yc)
        self._w, self._b = w, float(ym - xm @ w)


class DAEvolution(_DASearcher):
    """Regularized evolution over the language's hyperparameters (deeparchitect.txt Sec. 7.2).

    As the authors' ``EvolutionSearcher(..., P=100, S=25, regularized=True)``: the first 100
    architectures are random; afterwards each ask samples 25 members of the population
    without replacement and mutates the best; every result joins the population and the
    oldest member leaves (aging). Mutation (authors' ``mutate``): pick uniformly one
    hyperparameter of the walk that has more than one value, give it a different value
    uniformly, then walk the space again keeping every other earlier value and, after the
    mutated one, each old value while the walk meets the same hyperparameters in the same
    order and the value is still allowed; from the first hyperparameter that differs (a
    substitution module expanded differently) the values are drawn at random. The authors
    keep values by position and redraw everything after a hyperparameter whose name contains
    ``'sub'``; matching the names of the walk does the same without a naming convention.
    Failed trials do not join the population; a child equal to a pending trial is mutated
    again (up to 20 times).
    """

    name = "da_evolution"
    initial_points_setting = "population_size"  # a budget of at most this many is random search
    description = "DeepArchitect regularized evolution: population 100, tournament 25, one-value mutation"
    test_settings = {"population_size": 5, "sample_size": 3}  # small: quick conformance checks
    settings_spec = {
        "population_size": Setting(POPULATION, "population size P (deeparchitect.txt Sec. 7.2: 100)", type=int,
                                   domain=POSITIVE_INT),
        "sample_size": Setting(TOURNAMENT, "tournament sample size S (Sec. 7.2: 25)", type=int, domain=POSITIVE_INT),
    }

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any], fidelity: Fidelity | None) -> None:
        """A tournament draws ``sample_size`` members of the population: S <= P (Sec. 7.2: 25 of 100)."""
        require_at_most(f"optimizer {cls.name!r}", settings, "sample_size", "population_size",
                        "a tournament samples members of the population")

    def setup(self) -> None:
        p = self.settings["population_size"]
        self.population: deque[tuple[Any, list[Decision], float]] = deque(maxlen=p)
        self._traces: dict[Hashable, list[Decision]] = {}

    def mutate(self, trace: list[Decision]) -> tuple[Any, list[Decision]]:
        """A child of the architecture with decisions ``trace`` (see the class docstring)."""
        options = [t for t, (_, values, _) in enumerate(trace) if len(values) > 1]
        if not options:
            return walk_recorded(self.space, lambda p, _n, _v: trace[p][2])
        m = options[int(self.rng.integers(len(options)))]
        _, values, old = trace[m]
        new = int(self.rng.integers(len(values) - 1))
        new += new >= old  # uniform over the other values
        state = {"same": True}

        def choose(pos: int, name: str, vals: tuple) -> int:
            if pos < m:
                return trace[pos][2]
            if pos == m:
                return new
            if state["same"] and pos < len(trace) and trace[pos][0] == name:
                old_value = trace[pos][1][trace[pos][2]]
                for j, v in enumerate(vals):
                    if v == old_value and type(v) is type(old_value):
                        return j
                return int(self.rng.integers(len(vals)))  # same hyperparameter, value no longer allowed
            state["same"] = False
            return int(self.rng.integers(len(vals)))

        return walk_recorded(self.space, choose)

    def ask(self, pending: Sequence[Trial] = ()) -> Suggestion:
        p = self.settings["population_size"]
        if (len(self.history) + len(pending) < p and len(self.population) < p) or not self.population:
            config, trace = self._propose(lambda: random_draw(self.space, self.rng))
        else:
            members = list(self.population)
            k = min(self.settings["sample_size"], len(members))
            idx = np.sort(self.rng.choice(len(members), size=k, replace=False))
            parent = max((members[i] for i in idx), key=lambda m: m[2])  # first best: oldest, as the authors'
            config, trace = self._propose(lambda: self.mutate(parent[1]), self._pending_keys(pending))
        self._traces[self.space.key(self.space.validate(config))] = trace
        return Suggestion(config, self.full_fidelity())

    def tell(self, trial: Trial, result: Result) -> None:
        super().tell(trial, result)
        if result.failed or not math.isfinite(result.loss):
            return
        trace = self._traces.get(self.space.key(trial.config))
        if trace is not None:
            self.population.append((trial.config, trace, self._score(result)))
