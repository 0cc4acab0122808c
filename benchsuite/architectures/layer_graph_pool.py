"""NASBOT's initial pool of networks (the authors' ``opt/nn_opt_utils.py`` ``get_initial_pool``,
``nn/nn_examples.py``; nasbot.txt Sec. 5 starts every method from it), and fitting a pool network into
a space's unit limits. Graph and validation: :mod:`.layer_graph`."""
from __future__ import annotations

from ..errors import InvalidConfigError
from .layer_graph import Constraints, KINDS, LayerGraph, is_conv, is_pool, validate_graph
from .layer_graph_modifiers import _round_half_up


def _dflt_unit_sizes(n_blocks: int) -> list[int]:
    """64, 128, 256, 512, 512, ... (authors' ``_dflt_unit_sizes``)."""
    out, u = [], 64
    for _ in range(n_blocks):
        out.append(u)
        u = min(2 * u, 512)
    return out


def _chain(kind: str, labels: list[str], units: list, strides: list | None) -> LayerGraph:
    n = len(labels)
    return validate_graph(LayerGraph(kind, labels, units, [(i, i + 1) for i in range(n - 1)], strides))


def _vgg(n_conv_per_block: int) -> LayerGraph:
    """Authors' ``get_vgg_net``: 2x(conv3 x2 + max-pool) then 3 blocks of 128/256/512."""
    labels = ["ip", "conv3", "conv3", "max-pool", "conv3", "conv3", "max-pool"]
    units: list = [None, 64, 64, None, 128, 128, None]
    for bfs in (128, 256, 512):
        labels += ["conv3"] * n_conv_per_block + ["max-pool"]
        units += [bfs] * n_conv_per_block + [None]
    labels += ["fc", "fc", "fc", "softmax", "op"]
    units += [128, 256, 512, None, None]
    strides = [1 if is_conv(lab) else 2 if is_pool(lab) else None for lab in labels]
    return _chain("cnn", labels, units, strides)


def _blocked_cnn(n_blocks: int, n_per_block: int, n_fc: int, block_label: str = "conv3") -> LayerGraph:
    """Authors' ``get_blocked_cnn``: conv7 + max-pool, blocks whose first conv has stride 2,
    avg-pool, fc layers of twice the last block's filters, softmax."""
    sizes = _dflt_unit_sizes(n_blocks)
    labels, units, strides = ["ip", "conv7", "max-pool"], [None, 64, None], [None, 1, 2]
    for b in range(n_blocks):
        labels += [block_label] * n_per_block
        units += [sizes[b]] * n_per_block
        strides += [2] + [1] * (n_per_block - 1)
    labels += ["avg-pool"] + ["fc"] * n_fc + ["softmax", "op"]
    units += [None] + [2 * sizes[-1]] * n_fc + [None, None]
    strides += [2] + [None] * (n_fc + 2)
    return _chain("cnn", labels, units, strides)


def _blocked_mlp(n_blocks: int, n_per_block: int, rotation: int) -> LayerGraph:
    """Authors' ``get_blocked_mlp`` (regression): blocks alternate a rectifier and a sigmoid,
    block b has ``_dflt_unit_sizes`` units, then a linear decision layer.

    The authors shuffle the activation lists with global random state; we rotate them by the
    network's position in the pool instead, which is deterministic and still varies labels.
    (Their code also extends the unit list it was given instead of a fresh one, which shifts
    the units by ``n_blocks`` places; we use the evident intent, block b has size b.)
    """
    rect = ["relu", "elu", "crelu", "leaky-relu", "softplus"]
    sig = ["logistic", "tanh"]
    rect = rect[rotation % 5:] + rect[:rotation % 5]
    sig = sig[rotation % 2:] + sig[:rotation % 2]
    sizes = _dflt_unit_sizes(n_blocks)
    labels, units = ["ip"], [None]
    for b in range(n_blocks):
        lab = rect[(b // 2) % len(rect)] if b % 2 == 0 else sig[(b // 2) % len(sig)]
        labels += [lab] * n_per_block
        units += [sizes[b]] * n_per_block
    labels += ["linear", "op"]
    units += [None, None]
    return _chain("mlp", labels, units, None)


# (n_blocks, n_layers_per_block) of the authors' get_initial_mlp_pool, and the CNN pool
_MLP_POOL = ((3, 2), (4, 2), (5, 2), (3, 4), (6, 2), (8, 2), (6, 3), (10, 2), (4, 6), (8, 3))
_CNN_POOL_VGG = (1, 2, 3, 4)
_CNN_POOL_BLOCKED = ((3, 1, 1), (3, 2, 1), (3, 3, 1), (3, 4, 1), (3, 5, 1), (4, 4, 1))


def initial_pool(kind: str) -> list[LayerGraph]:
    """The authors' hand-made initial networks (``opt/nn_opt_utils.py`` ``get_initial_pool``).

    MLP: 10 feed-forward blocked MLPs of 6-24 hidden layers. CNN: VGG nets with 1-4 convs per
    block and 6 blocked CNNs (3-16 conv layers). Their EA, NASBOT's acquisition optimiser and
    their random sampler all start from these.
    """
    if kind == "mlp":
        return [_blocked_mlp(b, k, j) for j, (b, k) in enumerate(_MLP_POOL)]
    if kind == "cnn":
        return [_vgg(k) for k in _CNN_POOL_VGG] + [_blocked_cnn(*a) for a in _CNN_POOL_BLOCKED]
    raise InvalidConfigError(f"layer graph kind must be one of {list(KINDS)}, got {kind!r}")




def fit_units(g: LayerGraph, cons: Constraints) -> LayerGraph:
    """Scale a pool network's units into the unit limits (for spaces narrower than the authors')."""
    us = [u for u in g.units if u is not None]
    hi, lo = cons.max_num_units_per_layer, cons.min_num_units_per_layer
    factor = hi / max(us) if hi is not None and us and max(us) > hi else 1.0
    units = []
    for u in g.units:
        if u is not None:
            u = max(1, _round_half_up(u * factor))
            if lo is not None:
                u = max(u, lo)
            if hi is not None:
                u = min(u, hi)
        units.append(u)
    return LayerGraph(g.kind, g.labels, tuple(units), g.edges, g.strides)
