"""The nine modifiers of nasbot.txt Table 2 on layer graphs (details from the authors' ``nn/nn_modifiers.py``):
their sampling masses, :func:`apply_modifier`, and :func:`mutate` (NASBOT's EA step and the authors' random
sampler). Graph and validation: :mod:`.layer_graph`."""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidConfigError
from .layer_graph import (CNN_CONV_LABELS, CNN_POOL_LABELS, DEFAULT_CONSTRAINTS, MLP_LABELS, MLP_RECTIFIERS,
                          MLP_SIGMOIDS, SPECIAL_LABELS, _PROCESSING, Constraints, LayerGraph, dists_from_ip,
                          dists_to_op, has_units, image_sizes, is_conv, is_pool, validate_graph)


#: unnormalised sampling masses of the authors' code (``_PRIMITIVE_PROB_MASSES``; their
#: names swap_layer and branch are Table 2's swap_label and dup_path); the paper gives none
MODIFIER_MASSES: dict[str, float] = {
    "inc_single": 0.1, "dec_single": 0.1, "inc_en_masse": 0.1, "dec_en_masse": 0.1,
    "remove_layer": 0.1, "wedge_layer": 0.1, "swap_label": 0.2, "dup_path": 0.2, "skip": 0.2,
}
_MASS_TOTAL = sum(MODIFIER_MASSES.values())
#: the nine modifiers and the probability of drawing each (masses normalised to sum to 1)
MODIFIERS: dict[str, float] = {k: v / _MASS_TOTAL for k, v in MODIFIER_MASSES.items()}
#: probabilities of 1..5 modifier steps per mutation in NASBOT's EA and the authors' random
#: sampler (``ga_mutation_op_distro`` 'd0.5-0.25-0.125-0.075-0.05' in opt/nasbot.py)
MUTATION_STEP_PROBS: tuple[float, ...] = (0.5, 0.25, 0.125, 0.075, 0.05)

_CHANGE_FRAC = 0.125          # "by 1/8", nasbot.txt Table 2 (authors' _DFLT_CHANGE_FRAC)
_WEDGE_POOL_PROB = 0.05       # authors' choose_pool_with_prob
_STRIDE2_PROB = 0.05          # authors' choose_stride_2_with_prob / change_stride_with_prob
_BRANCH_KEEP_PROB = 0.5       # authors' keep_layer_with_prob (create_duplicate_branch)
_BRANCH_MIN_PATH = 4          # authors' min_path_length
_BRANCH_END_PROB = 0.2        # authors' end_path_prob
_MAX_TRIES = 10               # candidates tried per apply_modifier call before giving up
_MAX_DRAWS = 20               # modifier draws per mutation step (authors: max(2n, 20) draws)

# swap_label candidates and their probabilities (authors' get_list_of_swap_layer_modifiers)
_SWAP_TABLE: dict[str, tuple[tuple[str, ...], tuple[float, ...] | None]] = {
    "conv3": (("res3", "res5", "conv5", "conv7", "max-pool", "avg-pool"), (.25, .25, .15, .25, .05, .05)),
    "conv5": (("res3", "res5", "conv3", "conv7", "max-pool", "avg-pool"), (.25, .25, .2, .2, .05, .05)),
    "conv7": (("res3", "res5", "conv3", "conv5", "max-pool", "avg-pool"), (.25, .25, .25, .15, .05, .05)),
    "res3": (("conv3", "conv5", "res5", "res7", "max-pool", "avg-pool"), (.25, .25, .15, .25, .05, .05)),
    "res5": (("conv3", "conv5", "res3", "res7", "max-pool", "avg-pool"), (.25, .25, .2, .2, .05, .05)),
    "res7": (("conv3", "conv5", "res3", "res5", "max-pool", "avg-pool"), (.25, .25, .25, .15, .05, .05)),
    "avg-pool": (("max-pool",), None),
    "max-pool": (("avg-pool",), None),
}
for _lab in MLP_RECTIFIERS:
    _SWAP_TABLE[_lab] = (MLP_SIGMOIDS, None)     # a rectifier becomes a sigmoid ...
for _lab in MLP_SIGMOIDS:
    _SWAP_TABLE[_lab] = (MLP_RECTIFIERS, None)   # ... and vice versa (authors' code)


@dataclass
class _Edit:
    """A mutable copy of a graph that a modifier changes before it is validated again."""

    kind: str
    labels: list
    units: list
    strides: list | None
    edges: set

    @classmethod
    def of(cls, g: LayerGraph) -> "_Edit":
        return cls(g.kind, list(g.labels), list(g.units), None if g.strides is None else list(g.strides), set(g.edges))

    def add_layer(self, label: str, units: int | None, stride: int | None) -> int:
        self.labels.append(label)
        self.units.append(units)
        if self.strides is not None:
            self.strides.append(stride)
        return len(self.labels) - 1

    def graph(self) -> LayerGraph:
        return LayerGraph(self.kind, tuple(self.labels), tuple(self.units), tuple(sorted(self.edges)),
                          None if self.strides is None else tuple(self.strides))


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def _modifiable(g: LayerGraph) -> list[int]:
    """Layers whose units the unit modifiers change (authors' _get_directly_modifable_layer_idxs)."""
    return [i for i, lab in enumerate(g.labels) if has_units(g.kind, lab)]


def _processing(g: LayerGraph) -> list[int]:
    return [i for i, lab in enumerate(g.labels) if lab in _PROCESSING[g.kind]]


def _gen_single(g: LayerGraph, rng: np.random.Generator, ratio: float) -> Iterator[_Edit]:
    for i in rng.permutation(_modifiable(g)):
        new = _round_half_up(ratio * g.units[i])
        if new != g.units[i]:
            e = _Edit.of(g)
            e.units[i] = new
            yield e


def _gen_en_masse(g: LayerGraph, rng: np.random.Generator, ratio: float) -> Iterator[_Edit]:
    # the authors change one contiguous group (in topological order) of the modifiable layers:
    # a half if >= 4 internal layers, also a quarter if >= 8, also an eighth if >= 16
    n_internal = g.n_layers - 2
    groups = [(k, m) for m, need in ((2, 4), (4, 8), (8, 16)) if n_internal >= need for k in range(1, m + 1)]
    mod = _modifiable(g)
    for j in rng.permutation(len(groups)):
        k, m = groups[j]
        chosen = mod[(k - 1) * len(mod) // m: k * len(mod) // m]
        e = _Edit.of(g)
        for i in chosen:
            e.units[i] = _round_half_up(ratio * g.units[i])
        if chosen and e.units != list(g.units):
            yield e


def _gen_swap(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    for i in rng.permutation(g.n_layers):
        lab = g.labels[i]
        if lab not in _SWAP_TABLE:
            continue  # ip, op, fc and the decision layers keep their labels (authors' code)
        cands, probs = _SWAP_TABLE[lab]
        p = None if probs is None else np.asarray(probs) / sum(probs)
        new = str(cands[int(rng.choice(len(cands), p=p))])
        e = _Edit.of(g)
        e.labels[i] = new
        if g.kind == "cnn":
            if is_pool(new):
                e.units[i], e.strides[i] = None, 2
            elif is_conv(new) and rng.random() < _STRIDE2_PROB:
                e.strides[i] = 1 if g.strides[i] == 2 else 2
        yield e


def _wedge_units(g: LayerGraph, u: int, v: int) -> int:
    """Units of a layer wedged into edge (u, v): the authors' _determine_num_units_for_wedge_layer."""
    vals = [g.units[x] for x in (u, v) if g.units[x] is not None]
    if vals:
        return max(1, _round_half_up(sum(vals) / len(vals)))
    if not g.parents(u):  # u is the input
        vals = [g.units[c] for c in g.children(u) if g.units[c] is not None] or [16]
        return max(1, _round_half_up(sum(vals) / len(vals)))
    vals = [g.units[p] for p in g.parents(u) if g.units[p] is not None]
    if not vals:
        vals = [_wedge_units(g, p, u) for p in g.parents(u)]
    return max(1, _round_half_up(sum(vals) / len(vals)))


def _gen_wedge(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    op = g.n_layers - 1
    edges = list(g.edges)
    for j in rng.permutation(len(edges)):
        u, v = edges[j]
        if v == op:
            continue  # nothing is wedged before the output (authors' code)
        stride = None
        if g.kind == "cnn" and g.labels[u] == "fc":
            lab, units = "fc", g.units[u]
        else:
            if g.kind == "cnn" and u != 0 and rng.random() < _WEDGE_POOL_PROB:
                lab = str(rng.choice(CNN_POOL_LABELS))
            else:
                cands = CNN_CONV_LABELS if g.kind == "cnn" else MLP_LABELS
                lab = str(cands[int(rng.integers(len(cands)))])
            units = None if is_pool(lab) else _wedge_units(g, u, v)
            if is_conv(lab):
                stride = 2 if rng.random() < _STRIDE2_PROB else 1
            elif is_pool(lab):
                stride = 2
        e = _Edit.of(g)
        w = e.add_layer(lab, units, stride)
        e.edges.discard((u, v))
        e.edges |= {(u, w), (w, v)}
        yield e


def _gen_remove(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    if not _processing(g):
        return
    pre, post = image_sizes(g) if g.kind == "cnn" else (None, None)
    for idx in rng.permutation(g.n_layers):
        idx = int(idx)
        lab = g.labels[idx]
        if lab in SPECIAL_LABELS:
            continue
        parents, children = g.parents(idx), g.children(idx)
        if lab == "fc" and any(g.labels[p] != "fc" for p in parents):
            continue  # an fc layer goes only if it is not the first one (authors' code)
        e = _Edit.of(g)
        if g.kind == "cnn" and pre[idx] != post[idx]:
            # the layer halved the image: hand the halving to its children, or else its parents,
            # when they are all stride-1 convolutions (authors' code)
            for group in (children, parents):
                if all(is_conv(g.labels[x]) and g.strides[x] == 1 for x in group):
                    for x in group:
                        e.strides[x] = 2
                    break
        must_children = [c for c in children if len(g.parents(c)) == 1]
        must_parents = [p for p in parents if len(g.children(p)) == 1]
        must_children = [must_children[k] for k in rng.permutation(len(must_children))]
        must_parents = [must_parents[k] for k in rng.permutation(len(must_parents))]
        while must_children and must_parents:
            e.edges.add((must_parents.pop(), must_children.pop()))
        for c in must_children:
            e.edges.add((int(rng.choice(parents)), c))
        for p in must_parents:
            e.edges.add((p, int(rng.choice(children))))
        # drop the layer: its edges go, later layers shift down by one
        e.edges = {(a - (a > idx), b - (b > idx)) for a, b in e.edges if idx not in (a, b)}
        del e.labels[idx], e.units[idx]
        if e.strides is not None:
            del e.strides[idx]
        yield e


def _start_probs(g: LayerGraph) -> np.ndarray:
    """Start-layer weights for dup_path and skip: 1/sqrt(1 + hops from the input), zero for
    op, fc and decision layers (authors' _get_start_layer_probs_for_branching_and_skipping)."""
    d = dists_from_ip(g)
    return np.array([0.0 if lab in ("op", "softmax", "linear", "fc") else 1.0 / math.sqrt(1 + d[i])
                     for i, lab in enumerate(g.labels)])


def _gen_dup_path(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    if not _processing(g):
        return
    probs = _start_probs(g)
    op = g.n_layers - 1
    for _ in range(2 * g.n_layers):
        if probs.sum() <= 0:
            return
        start = int(rng.choice(g.n_layers, p=probs / probs.sum()))
        probs[start] *= 0.9
        path = [start]
        while True:  # a random walk to the output, stopping early with prob 0.2 per step
            ch = g.children(path[-1])
            nxt = int(ch[int(rng.integers(len(ch)))])
            path.append(nxt)
            if nxt == op or (len(path) >= _BRANCH_MIN_PATH and rng.random() < _BRANCH_END_PROB):
                break
        kept, fc_seen = [path[0]], False
        for idx in path[1:-1]:  # which inner layers the duplicate keeps (authors' rules)
            lab = g.labels[idx]
            if idx == path[1] and path[0] == 0:
                kept.append(idx)
            elif idx == path[-2] and len(kept) == 1:
                kept.append(idx)
            elif is_pool(lab) or lab in ("linear", "softmax") or (g.strides is not None and g.strides[idx] == 2):
                kept.append(idx)
            elif lab == "fc" and not fc_seen:
                kept.append(idx)
                fc_seen = True
            elif rng.random() < _BRANCH_KEEP_PROB:
                kept.append(idx)
        kept.append(path[-1])
        e = _Edit.of(g)
        prev = kept[0]
        for idx in kept[1:-1]:
            w = e.add_layer(g.labels[idx], g.units[idx], None if g.strides is None else g.strides[idx])
            e.edges.add((prev, w))
            prev = w
        e.edges.add((prev, kept[-1]))
        if len(e.labels) > g.n_layers or len(e.edges) > len(g.edges):
            yield e


def _gen_skip(g: LayerGraph, rng: np.random.Generator) -> Iterator[_Edit]:
    probs = _start_probs(g)
    probs[0] = 0.0
    dip, dop = dists_from_ip(g), dists_to_op(g)
    pre, post = image_sizes(g) if g.kind == "cnn" else (None, None)
    for _ in range(2 * g.n_layers):
        if probs.sum() <= 0:
            return
        u = int(rng.choice(g.n_layers, p=probs / probs.sum()))
        ends = np.zeros(g.n_layers)
        for v, lab in enumerate(g.labels):  # the authors' _get_end_layer_probs_for_skipping
            # (a regression MLP's linear layer may be the end, as in the authors' code)
            if dip[v] - 1 <= dip[u] or dop[v] + 1 >= dop[u] or lab in ("ip", "op", "softmax"):
                continue
            if g.kind == "cnn" and (pre[v] is None or post[u] is None or post[u] > pre[v]):
                continue
            if lab == "fc" and not all(is_pool(g.labels[p]) or is_conv(g.labels[p]) for p in g.parents(v)):
                continue
            ends[v] = 1.0
        if ends.sum() == 0:
            continue
        v = int(rng.choice(g.n_layers, p=ends / ends.sum()))
        e = _Edit.of(g)
        if g.kind == "cnn" and post[u] != pre[v]:
            # the image sizes differ: pass through avg-pools (authors' create_skipped_network)
            prev = u
            for _k in range(int(round(math.log2(pre[v] / post[u])))):
                w = e.add_layer("avg-pool", None, 2)
                e.edges.add((prev, w))
                prev = w
            e.edges.add((prev, v))
        else:
            e.edges.add((u, v))
        yield e


_GENERATORS: dict[str, Callable[[LayerGraph, np.random.Generator], Iterator[_Edit]]] = {
    "inc_single": lambda g, rng: _gen_single(g, rng, 1 + _CHANGE_FRAC),
    "dec_single": lambda g, rng: _gen_single(g, rng, 1 - _CHANGE_FRAC),
    "inc_en_masse": lambda g, rng: _gen_en_masse(g, rng, 1 + _CHANGE_FRAC),
    "dec_en_masse": lambda g, rng: _gen_en_masse(g, rng, 1 - _CHANGE_FRAC),
    "remove_layer": _gen_remove,
    "wedge_layer": _gen_wedge,
    "swap_label": _gen_swap,
    "dup_path": _gen_dup_path,
    "skip": _gen_skip,
}


def _results(g: LayerGraph, name: str, rng: np.random.Generator, cons: Constraints | None,
             max_tries: int) -> Iterator[LayerGraph]:
    """Valid graphs from modifier ``name``'s candidates (at most ``max_tries`` candidates tried)."""
    for k, edit in enumerate(_GENERATORS[name](g, rng)):
        if k >= max_tries:
            return
        try:
            new = validate_graph(edit.graph(), cons)
        except InvalidConfigError:
            continue
        if new != g:
            yield new


def _check_name(name: str) -> None:
    if name not in MODIFIERS:
        from ..errors import UnknownNameError
        raise UnknownNameError(f"unknown modifier {name!r}; the modifiers are {', '.join(MODIFIERS)}")


def apply_modifier(g: LayerGraph, name: str, rng: np.random.Generator,
                   constraints: Constraints | Mapping[str, Any] | None = DEFAULT_CONSTRAINTS) -> LayerGraph | None:
    """One random application of modifier ``name`` to ``g`` (a new valid graph), or ``None``.

    ``None`` when no candidate of the modifier gives a valid network within ``constraints``
    (the authors' defaults unless given; ``None`` checks validity only) in a few tries.
    """
    _check_name(name)
    cons = Constraints.make(constraints)
    g = validate_graph(g)
    return next(_results(g, name, rng, cons, _MAX_TRIES), None)


def _draw_modifier(rng: np.random.Generator) -> str:
    names = list(MODIFIERS)
    return names[int(rng.choice(len(names), p=np.fromiter(MODIFIERS.values(), float)))]


def mutate(g: LayerGraph, rng: np.random.Generator, n_steps: int = 1,
           constraints: Constraints | Mapping[str, Any] | None = DEFAULT_CONSTRAINTS) -> LayerGraph:
    """``n_steps`` random modifiers in a row, each drawn with :data:`MODIFIERS`' probabilities.

    A drawn modifier that cannot apply is redrawn (up to 20 draws per step, as the authors'
    NNModifier draws 20 groups); a step where none applies leaves the network as it is, so
    the result is always valid (possibly ``g`` itself when nothing applies at all).
    """
    cons = Constraints.make(constraints)
    cur = validate_graph(g, cons)
    for _ in range(int(n_steps)):
        for _d in range(_MAX_DRAWS):
            new = next(_results(cur, _draw_modifier(rng), rng, cons, _MAX_TRIES), None)
            if new is not None:
                cur = new
                break
    return cur


def draw_n_steps(rng: np.random.Generator) -> int:
    """A number of modifier steps, 1-5, with the authors' probabilities :data:`MUTATION_STEP_PROBS`."""
    return 1 + int(rng.choice(len(MUTATION_STEP_PROBS), p=np.asarray(MUTATION_STEP_PROBS)))
