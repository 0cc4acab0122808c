"""NASBOT's search space of layer graphs (nasbot.txt Sec. 2.2-4): the space object over the graph module.

The graphs, their validation, the modifiers and the authors' initial pool are in
:mod:`benchsuite.architectures.layer_graph`; the PyTorch compiler in
:mod:`benchsuite.architectures.layer_graph_torch`. This module joins them behind the architecture
interface (:class:`benchsuite.space.ArchitectureSpace`), so neither of them imports the other's side.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from ..errors import InvalidConfigError
from ..space import ArchitectureSpace
from .layer_graph import DEFAULT_CONSTRAINTS, KINDS, Constraints, LayerGraph, _bad, validate_graph
from .layer_graph_modifiers import MODIFIERS, _results, draw_n_steps, mutate
from .layer_graph_pool import fit_units, initial_pool


class LayerGraphSpace(ArchitectureSpace):
    """NASBOT's space of layer-graph networks (nasbot.txt Sec. 2.2-4) for ``kind`` mlp or cnn.

    Configurations are :class:`LayerGraph` objects (dicts and JSON text are accepted by
    ``validate``). ``sample`` follows the authors' random sampler
    (``random_sample_from_nn_domain`` / ``generate_many_neural_networks``): a network of the
    initial pool, drawn uniformly, goes through 1-5 generations (uniform), each applying
    1-5 modifiers (:data:`MUTATION_STEP_PROBS`). Constraint keywords are the fields of
    :class:`Constraints`; initial networks whose units fall outside narrower unit limits are
    scaled into them, and those that still break a limit are left out of the pool.
    """

    kind = "architecture"
    capabilities = frozenset({"build", "mutate", "otmann", "initial_pool", "feed_forward"})

    def __init__(self, kind: str, max_neighbours: int = 64, **constraints: Any):
        if kind not in KINDS:
            from ..errors import InvalidSettingError
            raise InvalidSettingError(f"layer-graph space kind must be one of {list(KINDS)}, got {kind!r}")
        self.net_kind = kind
        self.constraints: Constraints = Constraints.make({**DEFAULT_CONSTRAINTS.__dict__, **constraints})
        self.max_neighbours = int(max_neighbours)
        pool = []
        for g in initial_pool(kind):
            try:
                pool.append(validate_graph(fit_units(g, self.constraints), self.constraints))
            except InvalidConfigError:
                continue
        if not pool:
            from ..errors import InvalidSettingError
            raise InvalidSettingError(
                f"no initial {kind} network meets the constraints {self.constraints}; relax them")
        self.pool: list[LayerGraph] = pool

    def initial_pool(self) -> list[LayerGraph]:
        """The authors' hand-made initial networks that meet this space's constraints."""
        return list(self.pool)

    def feed_forward(self) -> Any:
        """This space's chain networks as a tree of decisions (:class:`.chain_tree.LayerGraphChains`), for
        TreeBO: the number of layers, then each layer's type, units and stride, within this space's limits."""
        from .chain_tree import LayerGraphChains

        return LayerGraphChains(self)

    def build(self, config: Any, in_shape: Any, n_out: int, **options: Any) -> Any:
        """The PyTorch module (``layer_graph_torch.build_network``): ``in_shape`` the input features (MLP)
        or (channels, height, width) (CNN), ``n_out`` regression outputs or classes."""
        from .layer_graph_torch import build_network

        shape = in_shape if isinstance(in_shape, int) else tuple(int(s) for s in in_shape)
        if isinstance(shape, tuple) and len(shape) == 1:
            shape = shape[0]
        return build_network(self.validate(config), shape, int(n_out), **options)

    # -- protocol --------------------------------------------------------------------------
    def sample(self, rng: np.random.Generator) -> LayerGraph:
        g = self.pool[int(rng.integers(len(self.pool)))]
        for _ in range(int(rng.integers(1, 6))):
            g = mutate(g, rng, draw_n_steps(rng), self.constraints)
        return g

    def validate(self, config: Any) -> LayerGraph:
        g = validate_graph(config, self.constraints)
        if g.kind != self.net_kind:
            raise _bad(f"this space holds {self.net_kind} networks, got a {g.kind}")
        return g

    def is_valid(self, config: Any) -> bool:
        """Whether ``config`` is a network of this space (well formed and within the limits)."""
        try:
            self.validate(config)
        except InvalidConfigError:
            return False
        return True

    def neighbours(self, config: Any) -> list[LayerGraph]:
        """Distinct single-modifier results, at most ``max_neighbours``, the same on every call.

        Unit modifiers are enumerated; the random ones (wedge, swap, remove's edge choice,
        dup_path, skip) use a generator seeded by the network's JSON text (crc32), and the
        modifiers take turns so that each is represented when the bound cuts the list.
        """
        g = self.validate(config)
        rng = np.random.default_rng(zlib.crc32(g.to_json().encode()))
        streams = [_results(g, name, rng, self.constraints, 4 * g.n_layers + 16) for name in MODIFIERS]
        out, seen = [], {g}
        while streams and len(out) < self.max_neighbours:
            alive = []
            for s in streams:
                new = next(s, None)
                if new is None:
                    continue
                alive.append(s)
                if new not in seen:
                    seen.add(new)
                    out.append(new)
                    if len(out) >= self.max_neighbours:
                        break
            streams = alive
        return out

    def mutate(self, config: Any, rng: np.random.Generator, n_steps: int = 1) -> LayerGraph:
        """``n_steps`` modifiers drawn with the authors' probabilities (always a valid network)."""
        return mutate(self.validate(config), rng, n_steps, self.constraints)

    def key(self, config: Any) -> tuple:
        g = config if isinstance(config, LayerGraph) and config.__dict__.get("_canonical") \
            else validate_graph(config)
        return (g.kind, g.labels, g.units, g.edges, g.strides)

    def to_json(self, config: Any) -> str:
        return self.validate(config).to_json()

    def from_json(self, text: str) -> LayerGraph:
        return self.validate(text)

    def describe(self) -> str:
        c = self.constraints
        return (f"LayerGraphSpace({self.net_kind}): NASBOT layer graphs, {c.min_num_layers}-{c.max_num_layers} "
                f"layers, {c.min_num_units_per_layer}-{c.max_num_units_per_layer} units/layer, in-degree <= "
                f"{c.max_in_degree}, out-degree <= {c.max_out_degree}, <= {c.max_num_edges} edges; "
                f"{len(self.pool)} initial networks; modifiers {', '.join(MODIFIERS)}")
