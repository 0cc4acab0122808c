"""COMBO's binary NAS cell: encoding, validity and pruning, network builder, FLOPs.

combo.txt Sec. 4.4 and Supp. 4.4.1-4.4.2; constants the extracted paper text lost are
taken from the authors' public code (QUVA-Lab/COMBO, ``COMBO/experiments/NAS/``), cited
file by file below. Nothing here is copied from that code.

The cell is a DAG on 7 states in a fixed order: IN, H1..H5, OUT. IN and OUT are identity
maps; each hidden state applies one of four operations chosen by two bits (Supp. Table 5
right, ``architecture_generate_binary.py`` ``NASBinaryCell``)::

    conv bit  large bit   operation
    0         0           Id (the paper's "MaxPool(1x1)")
    0         1           MaxPool 3x3, stride 1, padding 1
    1         0           Conv 3x3 (padding 1, bias) - BatchNorm - ReLU
    1         1           Conv 5x5 (padding 2, bias) - BatchNorm - ReLU

(kernel sizes, padding, bias and the Conv-BN-ReLU order from ``architecture_nodes.py``).
Every state keeps the cell's channel count and spatial size; a state's input is the
*sum* of its predecessors' outputs (``NASBinaryCell.forward``), so channels never need
matching inside a cell.

The 31 binary variables, in the authors' order (``nas_evaluation.py`` ``array2network``):
first two bits per hidden state, ``h1_conv, h1_large, h2_conv, ..., h5_large``, then the
21 edges ``i -> j`` (i < j) of the upper-triangular adjacency read row by row:
``edge_in_h1, edge_in_h2, ..., edge_in_out, edge_h1_h2, ..., edge_h5_out``.

Validity (``architecture_generate_binary.py`` ``valid_net_topo``): a cell is invalid only
when there is no directed path from IN to OUT. A valid cell is pruned: every hidden state
that is not reachable from IN, or from which OUT is not reachable, is removed with all its
edges; the remaining states are exactly those on some IN -> OUT path. Cells that prune to
the same graph (with the same operations on the states that remain) build the same
network, and so do cells that differ only by a relabelling of the hidden states (two
parallel branches swapped); :func:`canonical_key` identifies both, while the space's exact
key (the 31 bits) stays what results are indexed by.

Network (Supp. 4.4.2, ``NASBinaryCNN`` for CIFAR-10, channel base 16 in ``nas_binary.py``)::

    input (3 x 32 x 32)
    Conv 3x3 (pad 1, bias) - BN - ReLU      -> C channels
    cell (C)
    MaxPool 2x2 - Conv 1x1 (bias)           -> 2C channels, 16 x 16
    cell (2C)
    MaxPool 2x2 - Conv 1x1 (bias)           -> 4C channels, 8 x 8
    cell (4C)
    MaxPool 2x2 - flatten - Linear(4C * 4 * 4 -> 10)

The three cells share the structure, not the weights. The authors define an
``init_weights`` but never call it (``nas_evaluation.py`` builds the model and trains it
as is), so PyTorch's default initialisation is used here too.

FLOPs: we count 2 FLOPs per multiply-accumulate of convolutions and linear layers, which
is what ``torch.utils.flop_counter.FlopCounterMode`` counts (biases, BatchNorm, ReLU,
pooling and the sums of a state's inputs are not counted). :func:`network_flops` gives
the same number in closed form without torch, and :func:`count_flops` measures any
module with PyTorch's counter; the tests check that they agree. The authors counted with
the third-party ``pthflops.count_ops`` on one image, which also counts the element-wise
operations; since the objective only uses the ratio to the largest cell, the difference
is small (see ``benchsuite/benchmarks/combo_nas.py``).
"""
from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from ..errors import InvalidConfigError
from ..space import Binary, Space

if TYPE_CHECKING:  # torch is imported lazily so that importing this module stays light
    from torch import nn

NODES: tuple[str, ...] = ("in", "h1", "h2", "h3", "h4", "h5", "out")
N_NODES = len(NODES)
IN, OUT = 0, N_NODES - 1
HIDDEN: tuple[int, ...] = tuple(range(1, N_NODES - 1))

#: edges i -> j with i < j, row by row (the authors' order of the 21 connectivity bits)
EDGES: tuple[tuple[int, int], ...] = tuple((i, j) for i in range(N_NODES) for j in range(i + 1, N_NODES))

#: (conv bit, large bit) -> operation name (Supp. Table 5 right, ``NASBinaryCell``)
OPS: dict[tuple[int, int], str] = {(0, 0): "id", (0, 1): "maxpool3x3", (1, 0): "conv3x3", (1, 1): "conv5x5"}
CONV_KERNEL: dict[str, int] = {"conv3x3": 3, "conv5x5": 5}

TYPE_NAMES: tuple[str, ...] = tuple(f"{NODES[h]}_{bit}" for h in HIDDEN for bit in ("conv", "large"))
EDGE_NAMES: tuple[str, ...] = tuple(f"edge_{NODES[i]}_{NODES[j]}" for i, j in EDGES)
VARIABLE_NAMES: tuple[str, ...] = TYPE_NAMES + EDGE_NAMES

#: the example connectivity of combo.txt Table 4 / Supp. Table 5 (left)
EXAMPLE_EDGES: frozenset[tuple[int, int]] = frozenset(
    {(0, 1), (0, 5), (1, 3), (1, 6), (2, 4), (3, 5), (4, 5), (4, 6)})

IMAGE_SIZE = 32  # CIFAR-10
IN_CHANNELS = 3
N_POOLS = 3  # one 2x2 max-pool after each cell


class ComboCellSpace(Space):
    """The 31 binaries of COMBO's cell; a cell without an IN -> OUT path is not valid."""

    capabilities = frozenset({"build"})

    def build(self, config: Any, in_shape: Any = (IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE), n_out: int = 10,
              channels: int = 16) -> Any:
        """The architecture interface's builder: images (C, S, S), ``n_out`` classes (see :func:`build_network`)."""
        c, h, w = (int(x) for x in in_shape)
        if h != w:
            raise InvalidConfigError(f"COMBO's NAS network takes square images, not shape {tuple(in_shape)}")
        return build_network(config, channels=channels, num_classes=int(n_out), image_size=h, in_channels=c)

    def is_valid(self, config: Any) -> bool:
        return is_valid(config)


def make_space() -> ComboCellSpace:
    """The 31-binary search space; defaults are the Table 5 example edges with Conv 3x3 states."""
    variables = [Binary(name, default=1 if name.endswith("_conv") else 0) for name in TYPE_NAMES]
    variables += [Binary(name, default=int(e in EXAMPLE_EDGES)) for name, e in zip(EDGE_NAMES, EDGES)]
    return ComboCellSpace(variables)


@dataclass(frozen=True)
class Cell:
    """A decoded configuration: the operation of each hidden state and the set of edges."""

    ops: tuple[str, ...]  # one per hidden state H1..H5
    edges: frozenset[tuple[int, int]]

    def op(self, node: int) -> str:
        """Operation of state ``node`` (IN and OUT are identities)."""
        return self.ops[node - 1] if node in HIDDEN else "id"


def _bits(config: Mapping[str, Any]) -> list[int]:
    try:
        values = [config[name] for name in VARIABLE_NAMES]
    except (KeyError, TypeError):
        missing = [n for n in VARIABLE_NAMES if not isinstance(config, Mapping) or n not in config]
        raise InvalidConfigError(f"a COMBO NAS cell needs the 31 binary variables; missing {missing}") from None
    bits = []
    for name, v in zip(VARIABLE_NAMES, values):
        if v not in (0, 1):
            raise InvalidConfigError(f"variable {name!r}: value {v!r} is not allowed; allowed: 0 or 1")
        bits.append(int(v))
    return bits


def decode(config: Mapping[str, Any]) -> Cell:
    """The cell a configuration describes (before pruning)."""
    bits = _bits(config)
    ops = tuple(OPS[(bits[2 * k], bits[2 * k + 1])] for k in range(len(HIDDEN)))
    n_type = len(TYPE_NAMES)
    edges = frozenset(e for e, b in zip(EDGES, bits[n_type:]) if b)
    return Cell(ops, edges)


def encode(ops: tuple[str, ...] | list[str],
           edges: set[tuple[int, int]] | frozenset[tuple[int, int]]) -> dict[str, int]:
    """The configuration of a cell given by its five hidden operations and its edges."""
    inverse = {name: bits for bits, name in OPS.items()}
    if len(ops) != len(HIDDEN) or any(o not in inverse for o in ops):
        raise InvalidConfigError(f"need {len(HIDDEN)} operations from {sorted(inverse)}, got {list(ops)}")
    bad = [e for e in edges if tuple(e) not in EDGES]
    if bad:
        raise InvalidConfigError(f"edges {bad} are not forward edges i -> j (0 <= i < j <= 6) of the cell")
    config: dict[str, int] = {}
    for k, o in enumerate(ops):
        config[TYPE_NAMES[2 * k]], config[TYPE_NAMES[2 * k + 1]] = inverse[o]
    edge_set = {tuple(e) for e in edges}
    config.update({name: int(e in edge_set) for name, e in zip(EDGE_NAMES, EDGES)})
    return config


def _reachable(edges: frozenset[tuple[int, int]], start: int, forward: bool) -> set[int]:
    succ: dict[int, list[int]] = {v: [] for v in range(N_NODES)}
    for i, j in edges:
        a, b = (i, j) if forward else (j, i)
        succ[a].append(b)
    seen, stack = {start}, [start]
    while stack:
        for w in succ[stack.pop()]:
            if w not in seen:
                seen.add(w)
                stack.append(w)
    return seen


def prune(edges: frozenset[tuple[int, int]] | set[tuple[int, int]]) -> frozenset[tuple[int, int]] | None:
    """Edges among the states on some IN -> OUT path, or ``None`` when OUT is unreachable."""
    edges = frozenset(edges)
    from_in = _reachable(edges, IN, forward=True)
    if OUT not in from_in:
        return None
    keep = from_in & _reachable(edges, OUT, forward=False)
    return frozenset((i, j) for i, j in edges if i in keep and j in keep)


def invalid_reason(config: Mapping[str, Any]) -> str | None:
    """Why a configuration is an invalid cell, or ``None`` when it is valid."""
    if prune(decode(config).edges) is None:
        return "no path from IN to OUT"
    return None


def is_valid(config: Mapping[str, Any]) -> bool:
    """Whether the configuration describes a cell with a path from IN to OUT."""
    return invalid_reason(config) is None


def pruned_cell(config: Mapping[str, Any]) -> Cell:
    """The valid cell after pruning; raises :class:`InvalidConfigError` for an invalid one."""
    cell = decode(config)
    edges = prune(cell.edges)
    if edges is None:
        raise InvalidConfigError("invalid COMBO NAS cell (no path from IN to OUT); check is_valid(config) first")
    return Cell(cell.ops, edges)


def active_nodes(cell: Cell) -> list[int]:
    """Hidden states of a pruned cell that compute something (have an input)."""
    return sorted({j for _, j in cell.edges if j in HIDDEN})


def canonical_key(config: Mapping[str, Any]) -> Hashable:
    """Equal for configurations that build the same network, up to pruning and relabelling hidden states."""
    cell = decode(config)
    edges = prune(cell.edges)
    if edges is None:
        return ("invalid",)
    active = set(active_nodes(Cell(cell.ops, edges)))
    best: tuple | None = None
    # 5! relabellings of H1..H5; the smallest labelled graph is the representative
    for perm in itertools.permutations(HIDDEN):
        relabel = {IN: IN, OUT: OUT, **dict(zip(HIDDEN, perm))}
        ops = [""] * len(HIDDEN)  # "" marks a pruned state, whose operation does not matter
        for h in active:
            ops[relabel[h] - 1] = cell.op(h)
        form = (tuple(ops), tuple(sorted((relabel[i], relabel[j]) for i, j in edges)))
        if best is None or form < best:
            best = form
    return best


def max_flops_config() -> dict[str, int]:
    """The largest cell (Supp. 4.4.2, ``nas_binary.py``): every edge and Conv 5x5 on H1..H5."""
    return encode(["conv5x5"] * len(HIDDEN), set(EDGES))


def network_flops(config: Mapping[str, Any], channels: int = 16, num_classes: int = 10,
                  image_size: int = IMAGE_SIZE, in_channels: int = IN_CHANNELS) -> int:
    """FLOPs of one image through the network, 2 per multiply-accumulate (FlopCounterMode's count).

    Counts the convolutions and the linear layer only; raises :class:`InvalidConfigError`
    for an invalid cell (it has no network).
    """
    cell = pruned_cell(config)
    kernels = [CONV_KERNEL[cell.op(h)] for h in active_nodes(cell) if cell.op(h) in CONV_KERNEL]
    side, c = image_size, channels
    flops = 2 * side * side * c * in_channels * 9  # stem conv 3x3
    for stage in range(N_POOLS):
        flops += sum(2 * side * side * c * c * k * k for k in kernels)  # the cell's convolutions
        side //= 2
        if stage < N_POOLS - 1:  # 1x1 conv doubling the channels after the pool
            flops += 2 * side * side * c * (2 * c)
            c *= 2
    return flops + 2 * side * side * c * num_classes


def count_flops(model: nn.Module, input_shape: tuple[int, ...]) -> int:
    """FLOPs of one forward pass of ``model`` on zeros of ``input_shape``, by PyTorch's counter."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    was_training = model.training
    model.eval()  # batch statistics would be updated otherwise
    try:
        param = next(model.parameters(), None)
        x = torch.zeros(input_shape, device=param.device if param is not None else "cpu")
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model(x)
    finally:
        model.train(was_training)
    return int(counter.get_total_flops())


@cache
def _modules() -> dict[str, type]:
    """The torch module classes, defined on first use so that torch loads lazily."""
    import torch
    from torch import nn

    class ConvBnRelu(nn.Sequential):
        """A square convolution keeping size and channels, then BatchNorm and ReLU."""

        def __init__(self, channels: int, kernel: int):
            super().__init__(nn.Conv2d(channels, channels, kernel, padding=kernel // 2, bias=True),
                             nn.BatchNorm2d(channels), nn.ReLU())

    class CellModule(nn.Module):
        """One pruned cell: each state applies its operation to the sum of its inputs."""

        def __init__(self, cell: Cell, channels: int):
            super().__init__()
            self.inputs: dict[int, list[int]] = {}
            for i, j in sorted(cell.edges):
                self.inputs.setdefault(j, []).append(i)
            # ascending index is a topological order because every edge goes i -> j with i < j
            self.order = sorted(self.inputs)
            self.ops = nn.ModuleDict()
            for h in self.order:
                op = cell.op(h)
                if op in CONV_KERNEL:
                    self.ops[NODES[h]] = ConvBnRelu(channels, CONV_KERNEL[op])
                elif op == "maxpool3x3":
                    self.ops[NODES[h]] = nn.MaxPool2d(3, stride=1, padding=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = {IN: x}
            for j in self.order:
                srcs = self.inputs[j]
                s = out[srcs[0]]
                for i in srcs[1:]:
                    s = s + out[i]
                name = NODES[j]
                out[j] = self.ops[name](s) if name in self.ops else s
            return out[OUT]

    class ComboNasNetwork(nn.Module):
        """Stem, three cells with 2x2 max-pools and 1x1 channel-doubling convs, linear head."""

        def __init__(self, cell: Cell, channels: int, num_classes: int, image_size: int, in_channels: int):
            super().__init__()
            c = channels
            self.stem = nn.Sequential(nn.Conv2d(in_channels, c, 3, padding=1, bias=True), nn.BatchNorm2d(c), nn.ReLU())
            self.cell1 = CellModule(cell, c)
            self.reduce1 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(c, 2 * c, 1, bias=True))
            self.cell2 = CellModule(cell, 2 * c)
            self.reduce2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(2 * c, 4 * c, 1, bias=True))
            self.cell3 = CellModule(cell, 4 * c)
            self.pool3 = nn.MaxPool2d(2)
            side = image_size // 2 ** N_POOLS
            self.fc = nn.Linear(4 * c * side * side, num_classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.reduce1(self.cell1(self.stem(x)))
            x = self.reduce2(self.cell2(x))
            x = self.pool3(self.cell3(x))
            return self.fc(torch.flatten(x, 1))

    return {"network": ComboNasNetwork}


def build_network(config: Mapping[str, Any], channels: int = 16, num_classes: int = 10,
                  image_size: int = IMAGE_SIZE, in_channels: int = IN_CHANNELS) -> nn.Module:
    """The CIFAR-10 network of Supp. 4.4.2 for a valid configuration (fresh default-initialised weights)."""
    if channels < 1 or image_size % 2 ** N_POOLS or image_size < 2 ** N_POOLS:
        raise InvalidConfigError(f"need channels >= 1 and an image size divisible by {2 ** N_POOLS}; "
                                 f"got channels={channels}, image_size={image_size}")
    return _modules()["network"](pruned_cell(config), channels, num_classes, image_size, in_channels)
