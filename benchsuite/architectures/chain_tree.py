"""Feed-forward networks as a tree of decisions: the search space of TreeBO (NASBOT's baseline).

nasbot.txt Sec. 5 compares NASBOT with "TreeBO [15]: a BO method which only searches over feed
forward structures", [15] being Jenatton, Archambeau, Gonzalez and Seeger, "Bayesian optimization
with tree-structured dependencies" (ICML 2017). Their method needs the domain written as a tree:
a decision at the root, the variables below it that exist only for some of its values, and
leaves that fix which variables a configuration has. For a feed-forward (chain) network:

* the root decides the number of processing layers ``L`` (one leaf per admissible ``L``);
* below it, each layer ``i < L`` has a type (an MLP activation, a CNN conv/res/pool/fc label), a
  number of units (none for pools) and, for CNN convolutions, a stride of 1 or 2;
* layer ``i``'s variables exist in every network of at least ``i + 1`` layers, so they are shared
  by the leaves ``L > i``: the overlapping decision sequences whose information Jenatton et al.'s
  model transfers (see ``optimizers/models/tree_gp.py``).

:class:`ChainTree` is that tree for one space: sampling a chain at a leaf, the neighbours of a
chain inside its leaf (for optimising an acquisition function), the numeric encodings the tree
model reads, and the conversion to and from the space's own configurations. NASBOT's layer graphs
get one through :class:`LayerGraphChains` (``LayerGraphSpace.feed_forward()``), with the same size
limits as the layer-graph space, so that TreeBO and NASBOT search networks of the same sizes; a
chain becomes an ordinary layer graph (``ip -> layers -> linear/softmax -> op``), which the live
benchmarks build and train as they train NASBOT's networks.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidConfigError
from .layer_graph import CNN_CONV_LABELS, CNN_LABELS, DECISION_LABEL, MLP_LABELS, LayerGraph, has_units, is_conv, \
    is_pool

_VALID_CACHE = 200_000  # chains whose validity is remembered before the memory is cleared


@dataclass(frozen=True)
class Chain:
    """A feed-forward network as the tree's decisions: its processing layers' types, units and strides."""

    types: tuple[str, ...]
    units: tuple[int | None, ...]
    strides: tuple[int | None, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "types", tuple(self.types))
        object.__setattr__(self, "units", tuple(self.units))
        object.__setattr__(self, "strides", tuple(self.strides))
        if not len(self.types) == len(self.units) == len(self.strides):
            raise InvalidConfigError(f"a chain needs one type, unit count and stride per layer, got "
                                     f"{len(self.types)}, {len(self.units)} and {len(self.strides)}")

    @property
    def depth(self) -> int:
        """Number of processing layers: the leaf of the tree the chain lies under."""
        return len(self.types)


class ChainTree(ABC):
    """The tree of feed-forward networks of one space (module docstring).

    Subclasses say which types may follow which (:meth:`allowed_types`), which types carry units
    and strides, and how a chain converts to the space's configuration and back; the tree's
    sampling, neighbourhoods and encodings are shared.
    """

    #: every layer type of the space, in a fixed order (the one-hot encodings' columns)
    types: tuple[str, ...] = ()
    #: whether some types carry a stride choice (CNN convolutions)
    strided: bool = False
    #: whether the space has limits the tree's own rules do not cover, so that validity needs the conversion
    convert_to_check: bool = False

    def __init__(self, depths: Sequence[int], unit_values: Sequence[int]):
        self.depths = tuple(sorted(int(d) for d in depths))
        if not self.depths or self.depths[0] < 1:
            raise InvalidConfigError(f"a chain tree needs depths of at least one layer, got {list(depths)}")
        self.unit_values = np.array(sorted(set(int(u) for u in unit_values)), dtype=int)
        if len(self.unit_values) == 0 or self.unit_values[0] < 1:
            raise InvalidConfigError("a chain tree needs positive unit counts")
        self._log_lo = math.log(self.unit_values[0])
        self._log_span = max(math.log(self.unit_values[-1]) - self._log_lo, 1e-12)
        self._type_index = {t: k for k, t in enumerate(self.types)}
        self._valid: dict[Chain, bool] = {}
        self._codes = {int(u): self.unit_code(int(u)) for u in self.unit_values}

    # -- what a space says about its layers ----------------------------------------------------
    @abstractmethod
    def allowed_types(self, position: int, previous: str | None) -> tuple[str, ...]:
        """Types layer ``position`` may have after a layer of type ``previous`` (None: the input)."""

    @abstractmethod
    def has_units(self, layer_type: str) -> bool:
        """Whether layers of this type carry a number of units."""

    def stride_choices(self, layer_type: str) -> tuple[int | None, ...]:
        """Strides a layer of this type may take (``(None,)``: no stride decision)."""
        return (None,)

    @abstractmethod
    def to_config(self, chain: Chain) -> Any:
        """The space's configuration for ``chain``; raises :class:`InvalidConfigError` if the space rejects it."""

    @abstractmethod
    def from_config(self, config: Any) -> Chain | None:
        """The chain a configuration of the space is, or None when it is not feed-forward."""

    def follows_rules(self, chain: Chain) -> bool:
        """Whether every decision of ``chain`` is one the tree offers: an admissible depth, each type allowed
        after the previous one, units exactly where the type has them and admissible, an offered stride."""
        if chain.depth not in self.depths:
            return False
        lo, hi = int(self.unit_values[0]), int(self.unit_values[-1])
        prev = None
        for i, (t, u, s) in enumerate(zip(chain.types, chain.units, chain.strides)):
            if t not in self.allowed_types(i, prev) or s not in self.stride_choices(t):
                return False
            if self.has_units(t) != (u is not None):
                return False
            if u is not None and not (lo <= u <= hi and (hi - lo + 1 == len(self.unit_values)
                                                          or u in self.unit_values)):
                return False
            prev = t
        return True

    def is_valid(self, chain: Chain) -> bool:
        """Whether the space holds ``chain`` (its size limits, shapes and layer rules); remembered per chain,
        since an acquisition search asks about the same neighbours again and again."""
        known = self._valid.get(chain)
        if known is not None:
            return known
        ok = self.follows_rules(chain)
        if ok and self.convert_to_check:
            try:
                self.to_config(chain)
            except InvalidConfigError:
                ok = False
        if len(self._valid) >= _VALID_CACHE:
            self._valid.clear()
        self._valid[chain] = ok
        return ok

    # -- sampling and neighbourhoods -------------------------------------------------------------
    def _draw_units(self, rng: np.random.Generator) -> int:
        """A unit count log-uniform over the admissible range (rounded to the nearest admissible value)."""
        z = math.exp(self._log_lo + rng.random() * self._log_span)
        return int(self.unit_values[int(np.argmin(np.abs(self.unit_values - z)))])

    def sample(self, rng: np.random.Generator, depth: int | None = None, tries: int = 50) -> Chain:
        """A chain of ``depth`` layers (default: a leaf drawn uniformly), each decision uniform given the
        ones above it; redrawn until the space holds it (``tries`` times)."""
        for _ in range(tries):
            d = self.depths[int(rng.integers(len(self.depths)))] if depth is None else int(depth)
            types: list[str] = []
            for i in range(d):
                options = self.allowed_types(i, types[-1] if types else None)
                types.append(options[int(rng.integers(len(options)))])
            units = [self._draw_units(rng) if self.has_units(t) else None for t in types]
            strides = []
            for t in types:
                s = self.stride_choices(t)
                strides.append(s[int(rng.integers(len(s)))])
            chain = Chain(tuple(types), tuple(units), tuple(strides))
            if self.is_valid(chain):
                return chain
        raise InvalidConfigError(f"no valid chain of depth {depth} found in {tries} draws; the space's limits "
                                 "leave no feed-forward network of that depth")

    def _unit_steps(self, u: int) -> list[int]:
        """Admissible unit counts near ``u``: the nearest to u * 2^(+-1/2) and u * 2^(+-1)."""
        out = []
        for f in (0.5, 2 ** -0.5, 2 ** 0.5, 2.0):
            v = int(self.unit_values[int(np.argmin(np.abs(self.unit_values - u * f)))])
            if v != u and v not in out:
                out.append(v)
        return out

    def neighbours(self, chain: Chain) -> list[Chain]:
        """Chains of the same leaf one decision away (a layer's type, units or stride), valid ones only.

        A changed type must be allowed after the layer before it and allow the layer after it, so every
        neighbour follows the tree's rules by construction; only spaces with further limits
        (``convert_to_check``) convert each one to check it.
        """
        out: list[Chain] = []
        types, units, strides = list(chain.types), list(chain.units), list(chain.strides)
        mid = int(self.unit_values[len(self.unit_values) // 2])
        for i in range(chain.depth):
            prev = types[i - 1] if i else None
            for t in self.allowed_types(i, prev):
                if t == types[i] or (i + 1 < chain.depth and types[i + 1] not in self.allowed_types(i + 1, t)):
                    continue
                u = (units[i] if units[i] is not None else mid) if self.has_units(t) else None
                choices = self.stride_choices(t)
                st = strides[i] if strides[i] in choices else choices[0]
                out.append(Chain(tuple(types[:i] + [t] + types[i + 1:]), tuple(units[:i] + [u] + units[i + 1:]),
                                 tuple(strides[:i] + [st] + strides[i + 1:])))
            if units[i] is not None:
                for u in self._unit_steps(units[i]):
                    out.append(Chain(chain.types, tuple(units[:i] + [u] + units[i + 1:]), chain.strides))
            for st in self.stride_choices(types[i]):
                if st != strides[i]:
                    out.append(Chain(chain.types, chain.units, tuple(strides[:i] + [st] + strides[i + 1:])))
        return [c for c in out if self.is_valid(c)] if self.convert_to_check else out

    # -- encodings for the tree model ------------------------------------------------------------
    @property
    def max_depth(self) -> int:
        """The deepest leaf."""
        return self.depths[-1]

    def unit_code(self, u: int | None) -> float:
        """Units on a log scale in [0, 1] over the admissible range (0 for a layer without units)."""
        return 0.0 if u is None else (math.log(u) - self._log_lo) / self._log_span

    def row(self, chain: Chain) -> np.ndarray:
        """One fixed-width numeric row per chain: ``[depth, type index, unit code, stride flag] x layer``
        (the model's input; absent layers are -1 / 0 / 0)."""
        return self.rows([chain])[0]

    def rows(self, chains: Sequence[Chain]) -> np.ndarray:
        """:meth:`row` for many chains, ``(n, 1 + 3 max_depth)``."""
        m = self.max_depth
        out = np.zeros((len(chains), 1 + 3 * m))
        out[:, 1:1 + m] = -1
        for k, c in enumerate(chains):
            d = c.depth
            out[k, 0] = d
            out[k, 1:1 + d] = [self._type_index[t] for t in c.types]
            out[k, 1 + m:1 + m + d] = [self._codes.get(u, 0.0) for u in c.units]
            out[k, 1 + 2 * m:1 + 2 * m + d] = [s == 2 for s in c.strides]
        return out

    @property
    def layer_width(self) -> int:
        """Columns one layer takes in the encodings: one-hot type, unit code, stride flag (CNNs)."""
        return len(self.types) + 1 + int(self.strided)

    def _layer_blocks(self, rows: np.ndarray, depth: int) -> np.ndarray:
        """The first ``depth`` layers' columns ``(n, depth, layer_width)``: one-hot type (over sqrt 2, so that
        two types are at distance 1), unit code, stride flag; zeros where a chain has fewer layers."""
        m, T = self.max_depth, len(self.types)
        t = rows[:, 1:1 + depth].astype(int)
        blocks = np.zeros((len(rows), depth, self.layer_width))
        n_idx, l_idx = np.nonzero(t >= 0)
        blocks[n_idx, l_idx, t[n_idx, l_idx]] = 1.0 / math.sqrt(2.0)
        blocks[:, :, T] = rows[:, 1 + m:1 + m + depth]
        if self.strided:
            blocks[:, :, T + 1] = rows[:, 1 + 2 * m:1 + 2 * m + depth]
        return blocks

    def shared_features(self, rows: np.ndarray) -> np.ndarray:
        """The tree model's parametric features: per layer position, an indicator that the layer exists
        (a bias shared by every leaf below that node) and the layer's own columns, ``(n, max_depth (1 +
        layer_width))``."""
        rows = np.atleast_2d(rows)
        m = self.max_depth
        exists = (rows[:, :1] > np.arange(m)[None, :]).astype(float)[:, :, None]
        return np.concatenate([exists, self._layer_blocks(rows, m)], axis=2).reshape(len(rows), -1)

    def leaf_inputs(self, rows: np.ndarray, depth: int) -> np.ndarray:
        """The leaf GP's inputs for chains of ``depth`` layers: their layers' columns, ``(n, depth layer_width)``."""
        rows = np.atleast_2d(rows)
        return self._layer_blocks(rows, depth).reshape(len(rows), depth * self.layer_width)

    def leaf_groups(self, depth: int) -> np.ndarray:
        """Length-scale group of each leaf-input column: 0 type, 1 units, 2 stride."""
        one = [0] * len(self.types) + [1] + ([2] if self.strided else [])
        return np.array(one * depth, dtype=int)

    @property
    def n_groups(self) -> int:
        """Length-scale groups of the leaf inputs (type, units and, for CNNs, stride)."""
        return 3 if self.strided else 2


# -- NASBOT's layer graphs -------------------------------------------------------------------------
class LayerGraphChains(ChainTree):
    """The feed-forward networks of a :class:`~.layer_graph_space.LayerGraphSpace` as a tree.

    A chain of ``L`` processing layers is the layer graph ``ip -> l_1 -> ... -> l_L -> d -> op`` (``d`` the
    decision layer: ``linear`` for MLPs, ``softmax`` for CNNs), so the space's ``min_num_layers`` and
    ``max_num_layers`` (which count ip, d and op) bound ``L``, and its unit limits bound the units. MLP
    layers take any of the seven activations; a CNN starts with a convolution (the space's rule: the
    input feeds convolutions only), may then mix convolutions and pools, and once it has an ``fc`` layer
    has only ``fc`` layers (no image after a flat layer). Convolutions take stride 1 or 2, pools always
    halve. Whatever else the space demands (``max_num_2strides``, a mass limit) is checked by converting.
    """

    def __init__(self, space: Any):
        self.space = space
        self.kind = space.net_kind
        self.types = MLP_LABELS if self.kind == "mlp" else CNN_LABELS
        self.strided = self.kind == "cnn"
        c = space.constraints
        lo = max(1, (c.min_num_layers or 0) - 3)
        hi = (c.max_num_layers - 3) if c.max_num_layers is not None else 60 - 3
        if hi < lo:
            raise InvalidConfigError(f"the layer-graph space's limits ({c.min_num_layers}-{c.max_num_layers} layers) "
                                     "leave no room for a feed-forward network")
        ulo = c.min_num_units_per_layer or 1
        uhi = c.max_num_units_per_layer or 1024
        super().__init__(range(lo, hi + 1), range(ulo, uhi + 1))
        # a chain meets the degree limits by construction; mass, halvings and edge counts need the graph
        self.convert_to_check = (c.max_mass is not None or c.min_mass is not None or c.max_num_2strides is not None
                                 or (c.max_num_edges is not None and c.max_num_edges < self.max_depth + 2))

    def allowed_types(self, position: int, previous: str | None) -> tuple[str, ...]:
        if self.kind == "mlp":
            return self.types
        if position == 0:
            return CNN_CONV_LABELS
        if previous == "fc":
            return ("fc",)
        return self.types

    def has_units(self, layer_type: str) -> bool:
        return has_units(self.kind, layer_type)

    def stride_choices(self, layer_type: str) -> tuple[int | None, ...]:
        if self.kind == "cnn" and is_conv(layer_type):
            return (1, 2)
        if self.kind == "cnn" and is_pool(layer_type):
            return (2,)
        return (None,)

    def to_config(self, chain: Chain) -> Any:
        labels = ("ip", *chain.types, DECISION_LABEL[self.kind], "op")
        units = (None, *chain.units, None, None)
        edges = tuple((i, i + 1) for i in range(len(labels) - 1))
        strides = (None, *chain.strides, None, None)  # an MLP's are all None (the space rejects any other)
        return self.space.validate(LayerGraph(self.kind, labels, units, edges, strides))

    def from_config(self, config: Any) -> Chain | None:
        g = self.space.validate(config)
        n = g.n_layers
        if g.edges != tuple((i, i + 1) for i in range(n - 1)):
            return None  # a branch, a skip or several decision layers: not feed-forward
        inner = range(1, n - 2)
        strides = tuple(None if g.strides is None else g.strides[i] for i in inner)
        return Chain(tuple(g.labels[i] for i in inner), tuple(g.units[i] for i in inner), strides)
