"""The NAS-Bench-201 cell: search space, architecture strings, canonical form, network.

Source: X. Dong and Y. Yang, "NAS-Bench-201: Extending the Scope of Reproducible Neural
Architecture Search", ICLR 2020 (arXiv:2001.00326), Sec. 2.1 and Fig. 1; constants the
paper leaves implicit are read from the authors' public code (D-X-Y/AutoDL-Projects:
``lib/models/cell_infers/tiny_network.py`` for the skeleton, ``cells.py`` for the cell,
``lib/models/cell_operations.py`` for the operations). Nothing here is copied from it.

Cell
----
A cell is a DAG on 4 nodes; node 0 is the cell's input, node 3 its output, and each of the
6 edges ``i -> j`` (``i < j``) carries one of :data:`OPS`. Node ``j`` is the *sum* over
``i < j`` of ``op_ij(node i)``. The official architecture string lists the edges node by
node::

    |op~0|+|op~0|op~1|+|op~0|op~1|op~2|
     1<-0   2<-0 2<-1   3<-0 3<-1 3<-2

and this order is the reference here: the variables are ``edge_1_0, edge_2_0, edge_2_1,
edge_3_0, edge_3_1, edge_3_2`` (:data:`EDGE_NAMES`) and a configuration is a dict of them.
Public tools differ: NASLib's ``op_indices``, for instance, walk the edges by source node,
(1<-0), (2<-0), (3<-0), (2<-1), (3<-1), (3<-2), and number the operations in another order
(skip, none, 3x3, 1x1, pool); convert through the string, never through positions.
Integer codes of :func:`cell_space` are positions in :data:`OPS`.

Equivalence
-----------
The exact key (:meth:`NB201CellSpace.key`, the tuple of the six operations, one-to-one
with the architecture string) distinguishes all 5^6 = 15,625 cells and is what tables
are indexed by. Two cells with the same :func:`canonical_string` compute the same function
of the cell input up to a renaming of the convolutions' weights (the same network, for
every value of the weights). The converse is not attempted: identities that hold only for
particular operations are not used (average pooling is linear, BatchNorm in training mode
is invariant to the scale of its input). The rules:

* ``skip_connect`` is the identity and ``none`` is zero; sums are flattened and sorted
  (commutative, associative);
* an edge that cannot influence the output vanishes (its source is never reached from the
  input through non-``none`` edges, or its target never reaches the output), and so does
  an operation fed only zeros (strictly, a ReLU-Conv-BN of zeros emits BatchNorm's learned
  shift, an input-independent per-channel constant; we identify cells that differ by it);
* every convolution is one set of weights: when a skip path hands the same convolution's
  output to two places, it stays one named term (``c0`` used twice), which differs from
  two convolutions of the same input (``c0`` and ``c1``); average pooling has no weights,
  so two pools of the same sum are the same term, and it is not distributed over sums;
* the names ``c0, c1, ...`` are chosen canonically: convolutions that could be renamed
  into each other (same operation on inputs of the same shape) are tried in every order
  and the lexicographically smallest text is kept (at most 24 orders for a cell).

The published ``UniqueString`` of NAS-Bench-201 (the CSV's column,
``Structure.to_unique_str(consider_zero=True)`` in the authors' code) applies the same
identity and zero rules but writes each node as an expression, so it cannot tell a
convolution reused through a skip path from two independent convolutions (cells with
different parameter counts share a class), it keeps zero terms as ``#`` inside sums (a
dead edge still separates two cells), and it sorts each node's terms as flat strings (the
same sum can be spelled in several orders). Over all 15,625 cells ours has 5,260 classes
against 6,466 published; 4,883 cells have exactly the same class under both, 430
published classes are split by ours (weight sharing) and 688 of ours join several
published ones (zero terms, spelling); ``tests/test_nb201_cell.py`` checks these numbers.
Of the 150 cells whose published size is an isomorphic sibling's
(``tables/nas_bench_201/PARAM_COUNTS.md``), 88 are a different function from every such
sibling under our form: NAS-Bench-201's class merged networks that differ.

Cells whose output cannot be reached from the input through non-``none`` edges
(:func:`is_connected` is False: 341 of the 15,625, canonical form ``0``) compute an
output that does not depend on the image: the network predicts a constant and scores
chance accuracy. The published table simply has their numbers (about 10 % on
CIFAR-10, 1 % on CIFAR-100, 0.8 % on ImageNet16-120), and the live benchmark trains them
like any other cell, so both report chance-level error for them (see
``benchsuite/benchmarks/nb201_live.py``).

Network
-------
:func:`build_network` makes NAS-Bench-201's macro skeleton (``TinyNetwork``): a 3x3 conv
stem with C channels + BatchNorm; three stages of N cells at C, 2C, 4C channels separated
by a residual reduction block (ReLU-conv3x3 stride 2-BN, ReLU-conv3x3-BN, shortcut
2x2 average pool stride 2 + 1x1 conv without BN); then BatchNorm-ReLU, global average
pooling and a linear classifier (C=16, N=5 in the benchmark). Cell operations: ReLU-Conv-BN
for ``nor_conv_kxk`` (padding (k-1)/2, no conv bias), 3x3 average pool with stride 1,
padding 1 and ``count_include_pad=False``, identity, and zero. Every BatchNorm is affine
and tracks running statistics (PyTorch's defaults, as in the original), initialisation is
PyTorch's default. All six operations are instantiated, including ones that cannot
influence the output, exactly like the original: :func:`param_count` gives the count in
closed form and equals the table's ``size_in_mb`` times 1e6 (see
``tables/nas_bench_201/PARAM_COUNTS.md`` for the 150 cells where the published number
is a sibling's).
"""
from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidConfigError, show
from ..space import Categorical, Config, Space

if TYPE_CHECKING:  # pragma: no cover
    import torch.nn as nn

OPS: tuple[str, ...] = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
N_NODES = 4
# (target, source) in the official string's order
EDGES: tuple[tuple[int, int], ...] = ((1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2))
EDGE_NAMES: tuple[str, ...] = tuple(f"edge_{j}_{i}" for j, i in EDGES)
N_CELLS = len(OPS) ** len(EDGES)  # 15,625
DEFAULT_OP = "nor_conv_3x3"  # the densest cell; the all-"none" first level would be a zero network

FORMAT_HINT = "expected '|op~0|+|op~0|op~1|+|op~0|op~1|op~2|' with op one of " + ", ".join(OPS)
_CONV_KERNEL = {"nor_conv_1x1": 1, "nor_conv_3x3": 3}


class NB201CellSpace(Space):
    """The 6-edge NAS-Bench-201 cell space; validates dicts and architecture strings alike."""

    capabilities = frozenset({"build", "canonical_key"})

    def __init__(self) -> None:
        super().__init__([Categorical(name, OPS, default=DEFAULT_OP) for name in EDGE_NAMES])

    def validate(self, config: Any) -> Config:
        """A dict of the six edges, or an architecture string, as a validated dict."""
        if isinstance(config, str):
            return from_arch_string(config)
        return super().validate(config)

    def to_arch_string(self, config: Config) -> str:
        """The official architecture string of a configuration."""
        return to_arch_string(config)

    def canonical(self, config: Config) -> str:
        """Isomorphism-aware canonical form (see :func:`canonical_string`)."""
        return canonical_string(config)

    def build_network(self, config: Any, **sizes: Any) -> nn.Module:
        """The network of a configuration (see :func:`build_network`)."""
        return build_network(config, **sizes)

    def build(self, config: Any, in_shape: Any = (3, 32, 32), n_out: int = 10, **sizes: Any) -> nn.Module:
        """The architecture interface's builder: images of any size and channel count 3 (the skeleton's stem),
        ``n_out`` classes; ``sizes`` are :func:`build_network`'s ``channels`` and ``cells_per_stage``."""
        if len(in_shape) != 3 or int(in_shape[0]) != 3:
            raise InvalidConfigError(f"the NAS-Bench-201 network takes RGB images (3, H, W), not shape {tuple(in_shape)}")
        return build_network(config, num_classes=int(n_out), **sizes)

    def describe(self) -> str:
        """The space in words, for ``benchsuite describe``."""
        return (f"NAS-Bench-201 cell: {len(EDGE_NAMES)} edges x {len(OPS)} operations = {N_CELLS} cells; "
                f"a config is a dict of {', '.join(EDGE_NAMES)} or an architecture string "
                f"'|op~0|+|op~0|op~1|+|op~0|op~1|op~2|'\n" + super().describe())


@functools.cache
def cell_space() -> NB201CellSpace:
    """The shared cell space (six ``Categorical`` edges, levels in :data:`OPS` order)."""
    return NB201CellSpace()


# -- strings ---------------------------------------------------------------------------
def _ops_of(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The six operations in edge order, validated."""
    cfg = cell_space().validate(config) if not _is_plain_valid(config) else config
    return tuple(cfg[name] for name in EDGE_NAMES)


def _is_plain_valid(config: Any) -> bool:
    return (isinstance(config, dict) and len(config) == len(EDGE_NAMES)
            and all(config.get(n) in OPS for n in EDGE_NAMES))


def to_arch_string(config: Mapping[str, Any]) -> str:
    """The official string ``|op~0|+|op~0|op~1|+|op~0|op~1|op~2|`` of a configuration."""
    return _format(_ops_of(config))


_TOKEN = re.compile(r"([a-z0-9_]+)~(\d+)")  # matched whole (fullmatch)


def from_arch_string(s: str) -> Config:
    """Parse an official architecture string strictly; raises :class:`InvalidConfigError`."""
    if not isinstance(s, str):
        raise InvalidConfigError(f"architecture string must be a str, got {type(s).__name__}; {FORMAT_HINT}")
    text = s.strip()
    known = _string_table().get(text)
    if known is not None:  # fast path for well-formed strings (table builds parse all 15,625)
        return dict(zip(EDGE_NAMES, known))
    parts = text.split("+")
    if len(parts) != N_NODES - 1:
        raise InvalidConfigError(
            f"architecture string {show(s)} has {len(parts)} node(s), need {N_NODES - 1}; {FORMAT_HINT}")
    config: Config = {}
    for j, part in enumerate(parts, start=1):
        if len(part) < 2 or not (part.startswith("|") and part.endswith("|")):
            raise InvalidConfigError(f"architecture string {show(s)}: node {j} {show(part, 40)} is not '|...|'; {FORMAT_HINT}")
        tokens = part[1:-1].split("|")
        if len(tokens) != j:
            raise InvalidConfigError(
                f"architecture string {show(s)}: node {j} has {len(tokens)} input(s), need {j}; {FORMAT_HINT}")
        for i, tok in enumerate(tokens):
            m = _TOKEN.fullmatch(tok)
            if m is None:
                raise InvalidConfigError(f"architecture string {show(s)}: bad entry {show(tok, 40)}; {FORMAT_HINT}")
            op, src = m.group(1), int(m.group(2))
            if op not in OPS:
                raise InvalidConfigError(f"architecture string {show(s)}: unknown operation {show(op, 40)}; {FORMAT_HINT}")
            if src != i:
                raise InvalidConfigError(
                    f"architecture string {show(s)}: node {j} entry {i + 1} reads node {src}, must read node {i}; "
                    f"{FORMAT_HINT}")
            config[f"edge_{j}_{i}"] = op
    # every well-formed string is in the table: this one spells a cell another way (e.g. "~00")
    raise InvalidConfigError(f"architecture string {show(s)} is not in the official spelling; did you mean "
                             f"{_format(tuple(config[n] for n in EDGE_NAMES))!r}? {FORMAT_HINT}")


@functools.cache
def _string_table() -> dict[str, tuple[str, ...]]:
    return {_format(ops): ops for ops in itertools.product(OPS, repeat=len(EDGE_NAMES))}


def _format(ops: tuple[str, ...]) -> str:
    nodes, k = [], 0
    for j in range(1, N_NODES):
        nodes.append("|" + "|".join(f"{ops[k + i]}~{i}" for i in range(j)) + "|")
        k += j
    return "+".join(nodes)


def parse_config(x: Mapping[str, Any] | str) -> Config:
    """A configuration from a dict of edges or an architecture string (``benchsuite evaluate``)."""
    return cell_space().validate(x)


# -- enumeration -------------------------------------------------------------------------
def all_configs() -> list[Config]:
    """All 15,625 cells in code order (edge_1_0 slowest, each edge through :data:`OPS`)."""
    return [dict(zip(EDGE_NAMES, ops)) for ops in itertools.product(OPS, repeat=len(EDGE_NAMES))]


def config_index(config: Mapping[str, Any]) -> int:
    """Position of a cell in :func:`all_configs` (base-5 number of its op codes)."""
    idx = 0
    for op in _ops_of(config):
        idx = idx * len(OPS) + OPS.index(op)
    return idx


def index_config(index: int) -> Config:
    """Inverse of :func:`config_index`."""
    if not 0 <= int(index) < N_CELLS:
        raise InvalidConfigError(f"cell index {index} is outside [0, {N_CELLS - 1}]")
    codes, rest = [], int(index)
    for _ in EDGE_NAMES:
        rest, c = divmod(rest, len(OPS))
        codes.append(c)
    return {name: OPS[c] for name, c in zip(EDGE_NAMES, reversed(codes))}


# -- structure ---------------------------------------------------------------------------
def _reach_from_input(ops: tuple[str, ...]) -> list[bool]:
    reached = [True] + [False] * (N_NODES - 1)
    for (j, i), op in zip(EDGES, ops):  # EDGES is topologically ordered by target
        if op != "none" and reached[i]:
            reached[j] = True
    return reached


def _reach_output(ops: tuple[str, ...]) -> list[bool]:
    reaches = [False] * (N_NODES - 1) + [True]
    # by source, last first: when edges out of node i are seen, every later node is final
    for (j, i), op in sorted(zip(EDGES, ops), key=lambda e: -e[0][1]):
        if op != "none" and reaches[j]:
            reaches[i] = True
    return reaches


def is_connected(config: Mapping[str, Any]) -> bool:
    """Whether the output node is reachable from the input through non-``none`` edges."""
    return _reach_from_input(_ops_of(config))[N_NODES - 1]


def live_edges(config: Mapping[str, Any]) -> tuple[str, ...]:
    """Names of the non-``none`` edges on some input -> output path of non-``none`` edges."""
    ops = _ops_of(config)
    fwd, bwd = _reach_from_input(ops), _reach_output(ops)
    return tuple(name for name, (j, i), op in zip(EDGE_NAMES, EDGES, ops) if op != "none" and fwd[i] and bwd[j])


def _cell_terms(ops: tuple[str, ...]) -> tuple[list[tuple], dict[int, tuple[str, tuple]]]:
    """The output node as a list of terms, and the convolutions (edge -> (op, input terms)).

    A term is ``("x",)`` (the input), ``("c", edge)`` (the output of the convolution on that
    edge: one set of weights however many paths reuse it) or ``("a", terms)`` (an average
    pool of a sum: no weights, so equal inputs give equal values). ``skip_connect`` passes
    its source's terms on, ``none`` and anything fed only zeros add nothing.
    """
    vals: list[list[tuple]] = [[("x",)]] + [[] for _ in range(N_NODES - 1)]
    convs: dict[int, tuple[str, tuple]] = {}
    for e, ((j, i), op) in enumerate(zip(EDGES, ops)):
        src = vals[i]
        if op == "none" or not src:
            continue
        if op == "skip_connect":
            vals[j].extend(src)
        elif op == "avg_pool_3x3":
            vals[j].append(("a", tuple(src)))
        else:
            convs[e] = (op, tuple(src))
            vals[j].append(("c", e))
    return vals[N_NODES - 1], convs


def canonical_string(config: Mapping[str, Any]) -> str:
    """Isomorphism-aware canonical form: cells with equal forms compute the same function.

    "The same function" means equal up to renaming the convolutions' weights. The result
    names the live convolutions ``c0, c1, ...`` and lists them, then the output sum:
    ``"c0=nor_conv_3x3(x); c1=nor_conv_1x1(c0+x); out=avg_pool_3x3(c1)+c0"``; a cell without
    live convolutions is just its output expression (``"x"``, ``"avg_pool_3x3(x)+x"``), a
    zero network is ``"0"``. Sums are sorted; the naming is the lexicographically smallest
    over all renamings of interchangeable convolutions (see the module docstring).
    """
    out, convs = _cell_terms(_ops_of(config))
    if not out:
        return "0"
    live: set[int] = set()

    def visit(term: tuple) -> None:
        if term[0] == "a":
            for t in term[1]:
                visit(t)
        elif term[0] == "c" and term[1] not in live:
            live.add(term[1])
            for t in convs[term[1]][1]:
                visit(t)

    for t in out:
        visit(t)

    def shape(term: tuple) -> str:  # name-free: equal for convolutions that might be renamed into each other
        if term[0] == "x":
            return "x"
        op, inputs = ("avg_pool_3x3", term[1]) if term[0] == "a" else convs[term[1]]
        return f"{op}({'+'.join(sorted(shape(t) for t in inputs))})"

    def depth(term: tuple) -> int:  # convolutions on the longest path from the input: names follow the data flow
        if term[0] == "x":
            return 0
        inner = max(depth(t) for t in (term[1] if term[0] == "a" else convs[term[1]][1]))
        return inner + (term[0] == "c")

    groups: dict[tuple[int, str], list[int]] = {}
    for e in sorted(live):
        groups.setdefault((depth(("c", e)), shape(("c", e))), []).append(e)
    ordered = [groups[k] for k in sorted(groups)]
    best: str | None = None
    for choice in itertools.product(*(itertools.permutations(g) for g in ordered)):
        order = [e for g in choice for e in g]
        name = {e: f"c{k}" for k, e in enumerate(order)}

        def text(term: tuple) -> str:
            if term[0] == "x":
                return "x"
            if term[0] == "c":
                return name[term[1]]
            return f"avg_pool_3x3({'+'.join(sorted(text(t) for t in term[1]))})"

        parts = [f"{name[e]}={convs[e][0]}({'+'.join(sorted(text(t) for t in convs[e][1]))})" for e in order]
        body = "+".join(sorted(text(t) for t in out))
        candidate = "; ".join(parts + [f"out={body}"]) if parts else body
        if best is None or candidate < best:
            best = candidate
    assert best is not None
    return best


# -- parameter count -----------------------------------------------------------------------
def param_count(config: Mapping[str, Any], num_classes: int = 10, channels: int = 16,
                cells_per_stage: int = 5) -> int:
    """Trainable parameters of :func:`build_network` in closed form (exact; no torch).

    Every BatchNorm contributes 2 x channels (affine weight and bias; running statistics are
    buffers); convolutions have no bias; the classifier has one.
    """
    ops = _ops_of(config)
    return _param_count_ops(ops, num_classes, channels, cells_per_stage)


def _param_count_ops(ops: tuple[str, ...], num_classes: int, c: int, n: int) -> int:
    total = 3 * c * 9 + 2 * c  # stem conv + BN
    for s in range(3):
        cs = c * 2 ** s
        per_cell = sum(_CONV_KERNEL[op] ** 2 * cs * cs + 2 * cs for op in ops if op in _CONV_KERNEL)
        total += n * per_cell
        if s < 2:  # residual reduction block cs -> 2 cs
            co = 2 * cs
            total += 9 * cs * co + 2 * co + 9 * co * co + 2 * co + cs * co
    cl = 4 * c
    return total + 2 * cl + cl * num_classes + num_classes


def param_counts_table(cells: Sequence[Mapping[str, Any] | str], num_classes: int, channels: int = 16,
                       cells_per_stage: int = 5) -> np.ndarray:
    """Closed-form parameter counts (int64) of many cells (dicts or architecture strings) at once."""
    cache: dict[tuple[int, int], int] = {}
    out = np.empty(len(cells), dtype=np.int64)
    for k, cell in enumerate(cells):
        cfg = from_arch_string(cell) if isinstance(cell, str) else cell
        ops = _ops_of(cfg)
        key = (ops.count("nor_conv_1x1"), ops.count("nor_conv_3x3"))
        if key not in cache:
            cache[key] = _param_count_ops(ops, num_classes, channels, cells_per_stage)
        out[k] = cache[key]
    return out


# -- network (torch imported here only) ---------------------------------------------------------
@functools.cache
def _torch_classes() -> dict[str, type]:
    """Define the module classes once, on first use, so importing this file needs no torch."""
    import torch
    from torch import nn

    def relu_conv_bn(c_in: int, c_out: int, k: int, stride: int) -> nn.Sequential:
        return nn.Sequential(
            nn.ReLU(inplace=False),  # inputs are shared by several edges: never in place
            nn.Conv2d(c_in, c_out, k, stride=stride, padding=(k - 1) // 2, bias=False),
            nn.BatchNorm2d(c_out),
        )

    class Cell(nn.Module):
        """One NAS-Bench-201 cell at a fixed channel count (stride 1)."""

        def __init__(self, ops: tuple[str, ...], c: int):
            super().__init__()
            self.ops = ops
            self.edges = nn.ModuleDict()
            for name, op in zip(EDGE_NAMES, ops):
                if op in _CONV_KERNEL:
                    self.edges[name] = relu_conv_bn(c, c, _CONV_KERNEL[op], 1)
                elif op == "avg_pool_3x3":
                    self.edges[name] = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
                elif op == "skip_connect":
                    self.edges[name] = nn.Identity()
            # "none" edges add zero: skipped, which is exact (the original adds x * 0)
            self._inputs = [[(name, i) for name, (jj, i), op in zip(EDGE_NAMES, EDGES, ops)
                             if jj == j and op != "none"] for j in range(1, N_NODES)]

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            nodes = [x]
            for inputs in self._inputs:
                if inputs:
                    acc = self.edges[inputs[0][0]](nodes[inputs[0][1]])
                    for name, i in inputs[1:]:
                        acc = acc + self.edges[name](nodes[i])
                else:
                    acc = torch.zeros_like(x)
                nodes.append(acc)
            return nodes[-1]

        def extra_repr(self) -> str:
            return to_arch_string(dict(zip(EDGE_NAMES, self.ops)))

    class ResidualReduction(nn.Module):
        """The block between stages: halves the resolution, doubles the channels."""

        def __init__(self, c_in: int, c_out: int):
            super().__init__()
            self.conv_a = relu_conv_bn(c_in, c_out, 3, 2)
            self.conv_b = relu_conv_bn(c_out, c_out, 3, 1)
            self.shortcut = nn.Sequential(nn.AvgPool2d(2, stride=2, padding=0),
                                          nn.Conv2d(c_in, c_out, 1, bias=False))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.shortcut(x) + self.conv_b(self.conv_a(x))

    class Network(nn.Module):
        """NAS-Bench-201's ``TinyNetwork`` skeleton around one cell; returns logits."""

        def __init__(self, ops: tuple[str, ...], num_classes: int, c: int, n: int):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))
            layers: list[nn.Module] = []
            for s in range(3):
                cs = c * 2 ** s
                if s > 0:
                    layers.append(ResidualReduction(cs // 2, cs))
                layers.extend(Cell(ops, cs) for _ in range(n))
            self.cells = nn.Sequential(*layers)
            self.lastact = nn.Sequential(nn.BatchNorm2d(4 * c), nn.ReLU(inplace=False))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Linear(4 * c, num_classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.lastact(self.cells(self.stem(x)))
            return self.classifier(torch.flatten(self.pool(h), 1))

    return {"Cell": Cell, "ResidualReduction": ResidualReduction, "Network": Network}


def build_network(config: Mapping[str, Any] | str, num_classes: int = 10, channels: int = 16,
                  cells_per_stage: int = 5) -> nn.Module:
    """The NAS-Bench-201 network of a cell (a dict or an architecture string); returns logits."""
    for label, v, lo in (("num_classes", num_classes, 1), ("channels", channels, 1),
                         ("cells_per_stage", cells_per_stage, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise InvalidConfigError(f"{label} must be an integer >= {lo}, got {v!r}")
    cfg = parse_config(config)
    ops = tuple(cfg[n] for n in EDGE_NAMES)
    return _torch_classes()["Network"](ops, int(num_classes), int(channels), int(cells_per_stage))
