"""The search spaces of deeparchitect.txt Sec. 7.1, and the NAS-Bench-201 cell, in the language.

Nasbench [27], Nasnet [28], Flat [15] and Genetic [26] follow the authors' encodings in
negrinho/deep_architect (``deep_architect/contrib/misc/search_spaces/tensorflow_eager/``:
``nasbench_space.py``, ``nasnet_space.py``, ``hierarchical_space.py`` (``flat_search_space``),
``genetic_space.py``; the factory that names them is
``dev/examples/full_benchmarks/search_space_factory.py``). Every constant below is from
those files unless it says otherwise; nothing is copied. Operations are framework-free
names compiled by ``torch_backend.py``; TensorFlow's defaults the authors relied on are
spelled out (``'same'`` padding, convolutions with a bias, Keras' ``SeparableConv2D``).

Substitution modules whose expansions never introduce a hyperparameter to assign (the
Genetic stage, the Flat motif, the NAS-Bench-201 cell, operation choices, Nasnet's drop
path) are declared ``closed`` (:class:`~.core.SubstitutionModule`), which lets the space
find neighbours and mutations without re-walking it; every real expansion checks it. Genetic,
Flat and the NAS-Bench-201 cell are moreover declared ``product`` (every value list has the same
positions and domains), which lets ``DASpace.sample`` draw without walking; its first walk checks it.

Constants that the authors wrote as single-value hyperparameters (``D([64])``) are module
properties here, so a value list holds only real choices (see :class:`~.core.BasicModule`).

Deviations from the authors' code (all recorded in the docstrings below):

* Nasnet: no auxiliary head (the suite's harness trains one output); drop path is present
  as a module but inactive unless a trainer sets its ``progress`` (the authors drive it with
  the global step).
* Nasbench: a cell whose only edge is input -> output is infeasible (the authors' code
  divides by zero on it); the stem has ``init_filters`` channels (128 in the authors' code,
  which is also the default ``init_filters``).
* All spaces take size arguments (filters, cells) so that tests can build small networks;
  the defaults are the published sizes.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import InvalidSettingError
from .. import nb201 as _nb201
from .core import (IO, Bool, D, Dependent, SubstitutionModule, add, identity, mark_infeasible, siso_or,
                   siso_sequential)
from .core import BasicModule as B


# -- basic modules (thin constructors) ---------------------------------------------------------
def conv(filters: int, kernel: Any, stride: Any = 1, dilation: int = 1, bias: bool = True,
         padding: Any = "same", act: str | None = None) -> IO:
    """2-d convolution (Keras ``Conv2D`` defaults: bias, 'same' padding); ``act='relu'`` fuses a ReLU."""
    return B("conv2d", dict(filters=filters, kernel=kernel, stride=stride, dilation=dilation, bias=bias,
                            padding=padding, act=act), type_name="Conv2D").io()


def sep_conv(filters: int, kernel: int, stride: int = 1, bias: bool = True, act: str | None = None) -> IO:
    """Keras ``SeparableConv2D``: depthwise k x k then pointwise 1x1 (bias on the pointwise)."""
    return B("sep_conv2d", dict(filters=filters, kernel=kernel, stride=stride, bias=bias, act=act),
             type_name="SeparableConv2D").io()


def depthwise_conv(kernel: int, stride: int = 1, bias: bool = True, act: str | None = None) -> IO:
    """Keras ``DepthwiseConv2D`` (depth multiplier 1)."""
    return B("depthwise_conv2d", dict(kernel=kernel, stride=stride, bias=bias, act=act),
             type_name="DepthwiseConv2D").io()


def bn() -> IO:
    """Batch normalisation (affine)."""
    return B("batch_norm", {}, type_name="BatchNormalization").io()


def relu() -> IO:
    """ReLU."""
    return B("relu", {}, type_name="ReLU").io()


def max_pool(kernel: int, stride: int = 1, padding: Any = "same") -> IO:
    """Max pooling ('same' padding ignores the padded cells, as in TensorFlow)."""
    return B("max_pool2d", dict(kernel=kernel, stride=stride, padding=padding), type_name="MaxPool2D").io()


def avg_pool(kernel: int, stride: int = 1, padding: Any = "same", count_include_pad: bool = False) -> IO:
    """Average pooling ('same' padding averages over the real cells only, as in TensorFlow)."""
    return B("avg_pool2d", dict(kernel=kernel, stride=stride, padding=padding,
                                count_include_pad=count_include_pad), type_name="AvgPool2D").io()


def global_pool() -> IO:
    """Global average pooling to a vector."""
    return B("global_avg_pool", {}, type_name="GlobalAveragePool").io()


def flatten() -> IO:
    """Flatten to a vector."""
    return B("flatten", {}, type_name="Flatten").io()


def fc(units: int) -> IO:
    """Fully connected layer (with bias), no activation (the authors' ``fc_layer``)."""
    return B("fc", dict(units=units), type_name="FCLayer").io()


def dropout(rate: float) -> IO:
    """Dropout with drop probability ``rate``."""
    return B("dropout", dict(rate=rate), type_name="Dropout").io()


def concat(n: int) -> IO:
    """Channel concatenation of ``n`` inputs."""
    return B("concat", {}, [f"in{k}" for k in range(n)], type_name="Concat").io()


def _check_n_classes(n_classes: int) -> int:
    if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 1:
        raise InvalidSettingError(f"n_classes must be an integer >= 1, got {n_classes!r}")
    return n_classes


def _positive_ints(label: str, values: Sequence[Any], minimum: int = 1) -> tuple[int, ...]:
    out = tuple(values)
    if not out or any(isinstance(v, bool) or not isinstance(v, int) or v < minimum for v in out):
        raise InvalidSettingError(f"{label} must be integers >= {minimum}, got {values!r}")
    return out


# -- Genetic (Xie & Yuille 2017; authors' genetic_space.py) -----------------------------------------
def genetic(nodes_per_stage: Sequence[int] = (3, 4, 5), filters_per_stage: Sequence[int] = (64, 128, 256),
            filter_size_per_stage: Sequence[int] = (5, 5, 5), fc_units: int = 1024,
            dropout_rate: float = 0.5) -> Callable[[int], IO]:
    """Genetic CNN: per stage a DAG over ``nodes`` conv nodes coded by one bit per pair (i < j).

    Authors' ``genetic_space.py``: stages of 3, 4, 5 nodes at 64, 128, 256 filters, 5x5 input
    convolution, nodes ``add -> conv3x3 -> BN -> ReLU``, isolated nodes dropped, nodes without
    successors summed into an output node; 3x3/2 max pooling after each stage; then
    flatten, FC 1024, dropout 0.5 (keep 0.5), FC to the classes (no activation between, as there).
    """
    nodes_per_stage = _positive_ints("nodes_per_stage", nodes_per_stage, 2)
    filters_per_stage = _positive_ints("filters_per_stage", filters_per_stage)
    filter_size_per_stage = _positive_ints("filter_size_per_stage", filter_size_per_stage)
    if not len(nodes_per_stage) == len(filters_per_stage) == len(filter_size_per_stage):
        raise InvalidSettingError("nodes_per_stage, filters_per_stage and filter_size_per_stage need equal lengths")
    _positive_ints("fc_units", [fc_units])

    def node(num_inputs: int, filters: int) -> IO:
        return siso_sequential([add(num_inputs), conv(filters, 3), bn(), relu()])

    def stage(s: int, n: int, filters: int, fsize: int) -> IO:
        bits = {f"{i}_{j}": Bool(name=f"stage{s}/in_{i}_{j}")
                for i, j in itertools.combinations(range(1, n + 1), 2)}

        def input_node() -> IO:
            return siso_sequential([conv(filters, fsize), bn(), relu()])

        def sub(dh: dict[str, Any]) -> IO:
            num_ins = [sum(dh[f"{i}_{j}"] for i in range(1, j)) for j in range(1, n + 1)]
            num_outs = [sum(dh[f"{i}_{j}"] for j in range(i + 1, n + 1)) for i in range(1, n + 1)]
            if sum(num_ins) == 0:
                return input_node()
            nodes: list[IO | None] = [input_node()]
            nodes += [node(max(num_ins[k], 1), filters) if num_ins[k] > 0 or num_outs[k] > 0 else None
                      for k in range(n)]
            sinks = [k for k in range(n) if num_outs[k] == 0 and nodes[k + 1] is not None]
            out_node = node(len(sinks), filters)
            slot = [0] * (n + 1)
            n_out = 0
            for i in range(1, n + 1):
                ni = nodes[i]
                if ni is None:
                    continue
                if num_ins[i - 1] == 0:
                    nodes[0][1]["out"].connect(ni[0]["in0"])
                if num_outs[i - 1] == 0:
                    ni[1]["out"].connect(out_node[0][f"in{n_out}"])
                    n_out += 1
                for j in range(i + 1, n + 1):
                    if dh[f"{i}_{j}"] == 1:
                        nj = nodes[j]
                        assert nj is not None
                        ni[1]["out"].connect(nj[0][f"in{slot[j]}"])
                        slot[j] += 1
            return nodes[0][0], out_node[1]

        return SubstitutionModule("GeneticStage", sub, bits, closed=True).io()

    def space(n_classes: int = 10) -> IO:
        parts: list[IO] = []
        for s, (n, f, k) in enumerate(zip(nodes_per_stage, filters_per_stage, filter_size_per_stage)):
            parts.append(stage(s, n, f, k))
            parts.append(max_pool(3, 2))
        parts += [flatten(), fc(fc_units), dropout(dropout_rate), fc(_check_n_classes(n_classes))]
        return siso_sequential(parts)

    space.product = True  # type: ignore[attr-defined]  # every bit made up front, read by closed stages (DASpace.sample)
    return space


# -- Nasbench (Ying et al. 2019; authors' nasbench_space.py) --------------------------------------
NASBENCH_OPS = ("conv1", "conv3", "max3")


def nasbench(stacks: int = 3, cells_per_stack: int = 3, num_nodes: int = 5, init_filters: int = 128,
             max_edges: int = 9) -> Callable[[int], IO]:
    """NAS-Bench-101-style cell: 7-vertex DAG (21 edge bits) and 5 operations, shared by all cells.

    Authors' ``nasbench_space.py``: stem conv3x3(128)-BN-ReLU; 3 stacks of 3 cells, 2x2/2
    max pooling and doubled filters between stacks; global pooling, FC. Vertex inputs are
    summed after truncation to the fewest channels, the output concatenates the vertices
    feeding it (channels split as evenly as possible), an input->output edge adds a 1x1
    projection of the input. A cell is infeasible (``is_valid`` False, never sampled) when
    a vertex has outputs but no inputs or inputs but no outputs, the output has no input,
    there are more than 9 edges, or (authors' code divides by zero) the only edge into the
    output is from the input.
    """
    _positive_ints("stacks/cells_per_stack/num_nodes/init_filters/max_edges",
                   [stacks, cells_per_stack, num_nodes, init_filters, max_edges])
    pairs = list(itertools.combinations(range(num_nodes + 2), 2))
    last = num_nodes + 1

    def infeasibility(dh: dict[str, int]) -> list[str]:
        """Why a connection pattern is not a cell of the space (the authors' checks), or []."""
        num_ins = [sum(dh[f"{i}_{j}"] for i in range(j)) for j in range(num_nodes + 2)]
        num_outs = [sum(dh[f"{i}_{j}"] for j in range(i + 1, num_nodes + 2)) for i in range(num_nodes + 2)]
        reasons = []
        for v in range(1, num_nodes + 1):
            if num_outs[v] > 0 and num_ins[v] == 0:
                reasons.append(f"vertex {v} has no path from the input")
            if num_ins[v] > 0 and num_outs[v] == 0:
                reasons.append(f"vertex {v} has no path to the output")
        if num_ins[last] == 0:
            reasons.append("no path from input to output")
        if sum(num_ins) > max_edges:
            reasons.append(f"{sum(num_ins)} edges, more than {max_edges}")
        if not reasons and num_ins[last] - dh[f"0_{last}"] == 0:
            reasons.append("the only edge into the output is from the input")
        return reasons

    def prefix_sampler(rng: Any) -> list[tuple[str, int]]:
        """Uniform feasible edge bits, drawn without building graphs: the walk meets these 21 first."""
        while True:
            bits = rng.integers(2, size=len(pairs))
            dh = {f"{i}_{j}": int(b) for (i, j), b in zip(pairs, bits)}
            if not infeasibility(dh):
                return [(f"cell/in_{k}", dh[k]) for k in sorted(dh)]

    def space(n_classes: int = 10) -> IO:
        n = num_nodes
        edges = {f"{i}_{j}": Bool(name=f"cell/in_{i}_{j}") for i, j in itertools.combinations(range(n + 2), 2)}
        ops = [D(NASBENCH_OPS, name=f"cell/node_{k}") for k in range(n)]

        def vertex(num_inputs: int, k: int, filters: int) -> IO:
            return siso_sequential([
                B("add_truncate", {}, [f"in{q}" for q in range(num_inputs)], type_name="Add").io(),
                siso_or({"conv1": lambda: conv(filters, 1), "conv3": lambda: conv(filters, 3),
                         "max3": lambda: max_pool(3)}, ops[k], type_name="NodeOp", closed=True),
                bn(), relu()])

        def projection(filters: int) -> IO:
            return siso_sequential([conv(filters, 1), bn(), relu()])

        def cell(channels: int) -> IO:
            def sub(dh: dict[str, Any]) -> IO:
                num_ins = [sum(dh[f"{i}_{j}"] for i in range(j)) for j in range(n + 2)]
                num_outs = [sum(dh[f"{i}_{j}"] for j in range(i + 1, n + 2)) for i in range(n + 2)]
                direct = dh[f"0_{last}"]
                reasons = infeasibility(dh)
                if reasons:
                    mark_infeasible("Nasbench cell: " + ", ".join(reasons))
                    return identity()
                n_concat = num_ins[last] - direct
                base, extra = divmod(channels, n_concat)
                vch = [0] * (n + 2)
                vch[last] = channels
                for i in range(1, n + 1):
                    if dh[f"{i}_{last}"]:
                        vch[i] = base + (1 if extra > 0 else 0)
                        extra -= 1 if extra > 0 else 0
                for i in range(n - 1, 0, -1):
                    if not dh[f"{i}_{last}"]:
                        for j in range(i + 1, n + 1):
                            if dh[f"{i}_{j}"]:
                                vch[i] = max(vch[i], vch[j])
                nodes: list[Any] = [identity()]
                nodes += [vertex(num_ins[i], i - 1, vch[i]) if num_outs[i] > 0 else None for i in range(1, n + 1)]
                nodes.append(concat(n_concat))
                slot = [0] * (n + 2)
                for j in range(1, n + 1):
                    if dh[f"0_{j}"]:
                        p_in, p_out = projection(vch[j])
                        nodes[0][1]["out"].connect(p_in["in"])
                        p_out["out"].connect(nodes[j][0][f"in{slot[j]}"])
                        slot[j] += 1
                for i in range(1, n + 1):
                    for j in range(i + 1, n + 2):
                        if dh[f"{i}_{j}"]:
                            nodes[i][1]["out"].connect(nodes[j][0][f"in{slot[j]}"])
                            slot[j] += 1
                out = nodes[-1]
                if direct:
                    p_in, p_out = projection(channels)
                    a_in, a_out = B("add_truncate", {}, ["in0", "in1"], type_name="Add").io()
                    nodes[0][1]["out"].connect(p_in["in"])
                    p_out["out"].connect(a_in["in0"])
                    out[1]["out"].connect(a_in["in1"])
                    out = (a_in, a_out)
                return nodes[0][0], out[1]

            return SubstitutionModule("NasbenchCell", sub, edges).io()

        parts = [siso_sequential([conv(init_filters, 3), bn(), relu()])]
        filters = init_filters
        for s in range(stacks):
            if s > 0:
                parts.append(max_pool(2, 2))
                filters *= 2
            parts += [cell(filters) for _ in range(cells_per_stack)]
        parts += [global_pool(), fc(_check_n_classes(n_classes))]
        return siso_sequential(parts)

    space.prefix_sampler = prefix_sampler  # type: ignore[attr-defined]
    return space


# -- Nasnet (Zoph et al. 2018 search space 1; authors' nasnet_space.py) -----------------------------
NASNET_NORMAL_OPS = ("none", "depth_sep3", "depth_sep5", "depth_sep7", "avg3", "max3", "dilated_3x3_rate_2",
                     "1x7_7x1")
NASNET_REDUCTION_OPS = ("none", "depth_sep3", "depth_sep5", "depth_sep7", "avg3", "max3", "1x7_7x1")


def nasnet(num_nodes_per_cell: int = 5, num_normal_cells: int = 18, num_reduction_cells: int = 2,
           init_filters: int = 36, stem_multiplier: float = 3.0,
           drop_path_keep_prob: float = 0.7) -> Callable[[int], IO]:
    """NASNet search space: one normal and one reduction cell, each 5 nodes x 2 (input, op).

    Authors' ``nasnet_space.py`` (``generate_search_space(5, 18, 2, 36, 3.0)``): stem
    conv3x3 (36 x 3 filters)-BN; 18 normal cells with 2 reduction cells inserted (filters
    doubled at each); each node picks two of the earlier hidden states (two cell inputs
    first) and an operation for each (``SP1_ops``: dilated convolution only in normal
    cells), sums them; unused states are concatenated after a factorized reduction to the
    last one's shape. The previous-previous input is factorized-reduced to the previous
    input's shape. ReLU, global pooling, dropout with keep 1.0, FC. Operation and
    connection hyperparameters are shared by all cells of a type, as there. Not built:
    the auxiliary head (the harness trains one output); drop path (keep 0.7 scaled by the
    cell's depth, after every non-``none`` operation, selected by a dependent
    hyperparameter as in the authors' code) is a module whose ``progress`` stays 0 (inactive)
    unless a trainer sets it.
    """
    _positive_ints("num_nodes_per_cell/num_normal_cells/init_filters", [num_nodes_per_cell, num_normal_cells,
                                                                        init_filters])
    _positive_ints("num_reduction_cells", [num_reduction_cells], 0)

    def wrap(op: IO) -> IO:
        return siso_sequential([relu(), op, bn()])

    def conv_op(filters: int, k: int, stride: int, dilation: int, spatial_separable: bool) -> IO:
        if spatial_separable:
            return siso_sequential([conv(filters, [1, k], [1, stride]), bn(), relu(),
                                    conv(filters, [k, 1], [stride, 1])])
        return conv(filters, k, stride, dilation)

    def full_conv_op(filters: int, k: int, stride: int, dilation: int, spatial_separable: bool) -> IO:
        reduced = int(3 * filters / 8) if (k == 3 and spatial_separable) else int(filters / 4)
        if reduced < 1:
            return wrap(conv_op(filters, k, stride, dilation, spatial_separable))
        return siso_sequential([wrap(conv(reduced, 1)), wrap(conv_op(reduced, k, stride, dilation, spatial_separable)),
                                wrap(conv(filters, 1))])

    def check_filters(filters: int, stride: int = 1) -> IO:
        return B("check_filters", dict(filters=filters, stride=stride), type_name="CheckFilters").io()

    def pool_op(filters: int, k: int, stride: int, kind: str) -> IO:
        pool = avg_pool(k, stride) if kind == "avg" else max_pool(k, stride)
        return siso_sequential([pool, check_filters(filters)])

    def sep_op(filters: int, k: int, stride: int) -> IO:
        return siso_sequential([wrap(sep_conv(filters, k, stride)), wrap(sep_conv(filters, k, 1))])

    def factorized(add_relu: bool = False) -> IO:
        return B("factorized_reduction", dict(relu=add_relu), ["in0", "in1"], type_name="MaybeFactorizedReduction").io()

    def space(n_classes: int = 10) -> IO:
        def make_cell_fn(reduction: bool) -> Callable[[int, float], IO]:
            prefix = "reduction" if reduction else "normal"
            names = NASNET_REDUCTION_OPS if reduction else NASNET_NORMAL_OPS
            cell_ops = [D(names, name=f"{prefix}/op_{i // 2}_{i % 2}") for i in range(2 * num_nodes_per_cell)]
            conns = [D(list(range(i // 2 + 2)), name=f"{prefix}/in_{i // 2}_{i % 2}")
                     for i in range(2 * num_nodes_per_cell)]

            def node_fn(input_id: int, node_id: int, op_num: int, filters: int, cell_ratio: float) -> IO:
                stride = 2 if reduction and input_id < 2 else 1
                h_op = cell_ops[node_id * 2 + op_num]
                table: dict[str, Callable[[], IO]] = {
                    "none": lambda: check_filters(filters, stride),
                    "depth_sep3": lambda: sep_op(filters, 3, stride),
                    "depth_sep5": lambda: sep_op(filters, 5, stride),
                    "depth_sep7": lambda: sep_op(filters, 7, stride),
                    "avg3": lambda: pool_op(filters, 3, stride, "avg"),
                    "max3": lambda: pool_op(filters, 3, stride, "max"),
                    "dilated_3x3_rate_2": lambda: full_conv_op(filters, 3, stride, 2, False),
                    "1x7_7x1": lambda: full_conv_op(filters, 7, stride, 1, True),
                }
                op_in, op_out = siso_or(table, h_op, type_name="NasnetOp", closed=True)
                not_none = Dependent(lambda dh: dh["op"] != "none", {"op": h_op})

                def drop_sub(dh: dict[str, Any]) -> IO:
                    if not dh["opt"]:
                        return identity()
                    return B("drop_path", dict(cell_ratio=cell_ratio, keep_prob=drop_path_keep_prob),
                             type_name="DropPath").io()

                d_in, d_out = SubstitutionModule("SISOOptional", drop_sub, {"opt": not_none}, closed=True).io()
                op_out["out"].connect(d_in["in"])
                return op_in, d_out

            def cell(filters: int, cell_ratio: float) -> IO:
                def sub(dh: dict[str, Any]) -> IO:
                    prev_in, prev_out = identity()
                    cur_in, cur_out = wrap(conv(filters, 1))
                    f_in, f_out = factorized(add_relu=True)
                    prev_out["out"].connect(f_in["in0"])
                    cur_out["out"].connect(f_in["in1"])
                    states = [f_out["out"], cur_out["out"]]
                    used = [False] * (num_nodes_per_cell + 2)
                    for i in range(num_nodes_per_cell):
                        i0, i1 = dh[f"{i}_0"], dh[f"{i}_1"]
                        h0 = node_fn(i0, i, 0, filters, cell_ratio)
                        h1 = node_fn(i1, i, 1, filters, cell_ratio)
                        states[i0].connect(h0[0]["in"])
                        states[i1].connect(h1[0]["in"])
                        used[i0] = used[i1] = True
                        a_in, a_out = add(2)
                        h0[1]["out"].connect(a_in["in0"])
                        h1[1]["out"].connect(a_in["in1"])
                        states.append(a_out["out"])
                    unused = [k for k, u in enumerate(used) if not u]
                    c_in, c_out = concat(len(unused))
                    ids = [identity() for _ in unused]
                    last = ids[-1][1]["out"]
                    for q, k in enumerate(unused):
                        states[k].connect(ids[q][0]["in"])
                        r_in, r_out = factorized()
                        ids[q][1]["out"].connect(r_in["in0"])
                        last.connect(r_in["in1"])
                        r_out["out"].connect(c_in[f"in{q}"])
                    return {"in0": prev_in["in"], "in1": cur_in["in"]}, c_out

                hyperps = {f"{i // 2}_{i % 2}": conns[i] for i in range(2 * num_nodes_per_cell)}
                return SubstitutionModule("Cell", sub, hyperps, ["in0", "in1"], ["out"]).io()

            return cell

        s_in, s_out = siso_sequential([conv(int(init_filters * stem_multiplier), 3), bn()])
        normal_cell, reduction_cell = make_cell_fn(False), make_cell_fn(True)
        total = num_normal_cells + num_reduction_cells
        has_reduction = [False] * num_normal_cells
        for i in range(num_reduction_cells):
            has_reduction[int(float(i + 1) / (num_reduction_cells + 1) * num_normal_cells)] = True
        states = [s_out["out"], s_out["out"]]
        filters, made = init_filters, 0
        for i in range(num_normal_cells):
            kinds = ([reduction_cell] if has_reduction[i] else []) + [normal_cell]
            for cell_fn in kinds:
                if cell_fn is reduction_cell:
                    filters *= 2
                c_in, c_out = cell_fn(filters, (made + 1) / total)
                states[-2].connect(c_in["in0"])
                states[-1].connect(c_in["in1"])
                states.append(c_out["out"])
                made += 1
        t_in, t_out = siso_sequential([relu(), global_pool(), dropout(0.0), fc(_check_n_classes(n_classes))])
        states[-1].connect(t_in["in"])
        return s_in, t_out

    return space


# -- Flat (Liu et al. 2018, flat representation; authors' hierarchical_space.py) ---------------------
FLAT_PRIMITIVES = ("conv1x1", "depthwise3x3", "separable3x3", "max_pool3x3", "avg_pool3x3", "identity")


def flat(c0: int = 64, num_nodes: int = 11) -> Callable[[int], IO]:
    """Liu et al.'s flat space: one 11-node motif (edge ops among 6 primitives), used 6 times.

    Authors' ``flat_search_space``: edge ``i-1 -> i`` always present (op 1..6), other edges
    ``j -> i`` (j < i-1) absent (0) or op 1..6; every node concatenates its incoming ops and
    applies BN + conv1x1(C)+ReLU; the motif ends with another BN + conv1x1+ReLU. Primitives:
    BN-conv1x1(C)-ReLU, depthwise 3x3 (ReLU)-BN, separable 3x3 (C, ReLU)-BN, 3x3 max and
    average pooling (stride 1), identity. The one motif's hyperparameters are shared by
    all 6 uses. Skeleton: BN-conv3x3(C)-ReLU, then motif / separable conv alternating at
    C, 2C, 4C (separable convs of stride 2 to 2C, 4C, 8C; the ones of stride 1 have C
    filters as in the authors' code), global pooling, FC.
    """
    _positive_ints("c0/num_nodes", [c0, num_nodes])

    def conv_cell(channels: int, k: int) -> IO:
        return siso_sequential([bn(), conv(channels, k, bias=False, act="relu")])

    def primitive(op_id: int, channels: int) -> IO:
        if op_id == 1:
            return conv_cell(channels, 1)
        if op_id == 2:
            return siso_sequential([depthwise_conv(3, bias=False, act="relu"), bn()])
        if op_id == 3:
            return siso_sequential([sep_conv(channels, 3, bias=False, act="relu"), bn()])
        if op_id == 4:
            return max_pool(3)
        if op_id == 5:
            return avg_pool(3)
        return identity()

    def space(n_classes: int = 10) -> IO:
        motif_h = {}
        for i in range(1, num_nodes):
            motif_h[f"e{i:02d}_{i - 1:02d}"] = D(list(range(1, 7)), name=f"motif/e{i:02d}_{i - 1:02d}")
            for j in range(i - 1):
                motif_h[f"e{i:02d}_{j:02d}"] = D(list(range(0, 7)), name=f"motif/e{i:02d}_{j:02d}")

        def motif(channels: int) -> IO:
            def sub(dh: dict[str, Any]) -> IO:
                first_in, first_out = identity()
                node_outs: list[IO] = []
                for i in range(num_nodes):
                    incoming: list[IO] = [(first_in, first_out)] if i == 0 else []
                    for j in range(i):
                        op_id = dh[f"e{i:02d}_{j:02d}"]
                        if op_id > 0:
                            p_in, p_out = primitive(op_id, channels)
                            node_outs[j][1]["out"].connect(p_in["in"])
                            incoming.append((p_in, p_out))
                    c_in, c_out = siso_sequential([concat(len(incoming)), conv_cell(channels, 1)])
                    for q, (_, p_out) in enumerate(incoming):
                        p_out["out"].connect(c_in[f"in{q}"])
                    node_outs.append((c_in, c_out))
                end_in, end_out = conv_cell(channels, 1)
                node_outs[-1][1]["out"].connect(end_in["in"])
                return first_in, end_out

            return SubstitutionModule("MotifLevel2", sub, motif_h, closed=True).io()

        parts = [conv_cell(c0, 3), motif(c0), sep_conv(c0, 3, bias=False), motif(c0),
                 sep_conv(2 * c0, 3, 2, bias=False), motif(2 * c0), sep_conv(c0, 3, bias=False), motif(2 * c0),
                 sep_conv(4 * c0, 3, 2, bias=False), motif(4 * c0), sep_conv(c0, 3, bias=False), motif(4 * c0),
                 sep_conv(8 * c0, 3, 2, bias=False), global_pool(), fc(_check_n_classes(n_classes))]
        return siso_sequential(parts)

    space.product = True  # type: ignore[attr-defined]  # one motif's edges, made up front, read by closed motifs
    return space


# -- NAS-Bench-201 cell in the language ------------------------------------------------------------
def nb201(channels: int = 16, cells_per_stage: int = 5) -> Callable[[int], IO]:
    """The NAS-Bench-201 network (``benchsuite/architectures/nb201.py``) written in the language.

    Six independent hyperparameters ``cell/edge_j_i`` over :data:`nb201.OPS`, shared by all
    cells; traversal meets them in the official string's edge order, so a value list is the
    six operations of ``|op~0|+|op~0|op~1|+|op~0|op~1|op~2|``. The cell is a substitution
    module expanded into ReLU-Conv-BN / average pool / identity / zero modules and sums (a
    ``none`` edge is a zero module, as in the authors' ``Zero`` op, so operations that cannot
    reach the output are still instantiated, as in nb201.py and the original); the
    skeleton (stem, residual reduction blocks, BN-ReLU, pooling, linear) is nb201.py's,
    with the same operations, so the compiled network has the same parameters.
    """
    _positive_ints("channels/cells_per_stage", [channels, cells_per_stage])
    kernel = {"nor_conv_1x1": 1, "nor_conv_3x3": 3}

    def rcb(c_out: int, k: int, stride: int) -> IO:
        return siso_sequential([relu(), conv(c_out, k, stride, bias=False, padding=(k - 1) // 2), bn()])

    def edge_op(op: str, c: int) -> IO:
        if op in kernel:
            return rcb(c, kernel[op], 1)
        if op == "avg_pool_3x3":
            return avg_pool(3, 1, padding=1, count_include_pad=False)
        if op == "none":  # the original's Zero op (x * 0): keeps every edge, and every operation, in the graph
            return B("zeros", {}, type_name="Zero").io()
        return identity()

    # per node 1, 2, 3: the edges into it (source node, name), in the official string's order; listed once, as
    # every cell of every network expands with them (SMBO expands 15 cells for each candidate it scores)
    into = [[(i, name) for (j, i), name in zip(_nb201.EDGES, _nb201.EDGE_NAMES) if j == node]
            for node in range(1, _nb201.N_NODES)]

    def space(n_classes: int = 10) -> IO:
        edges = {name: D(_nb201.OPS, name=f"cell/{name}") for name in _nb201.EDGE_NAMES}

        def cell(c: int) -> IO:
            def sub(dh: dict[str, Any]) -> IO:
                x_in, x_out = identity()
                nodes = [x_out["out"]]
                for edges_in in into:
                    terms = []
                    for i, name in edges_in:
                        e_in, e_out = edge_op(dh[name], c)
                        nodes[i].connect(e_in["in"])
                        terms.append(e_out["out"])
                    a_in, a_out = add(len(terms))
                    for q, t in enumerate(terms):
                        t.connect(a_in[f"in{q}"])
                    nodes.append(a_out["out"])
                return x_in, {"out": nodes[-1]}

            return SubstitutionModule("NB201Cell", sub, edges, closed=True).io()

        def reduction(c_out: int) -> IO:
            i_in, i_out = identity()
            a_in, a_out = siso_sequential([rcb(c_out, 3, 2), rcb(c_out, 3, 1)])
            s_in, s_out = siso_sequential([avg_pool(2, 2, padding=0, count_include_pad=True),
                                           conv(c_out, 1, bias=False, padding=0)])
            p_in, p_out = add(2)
            i_out["out"].connect(a_in["in"])
            i_out["out"].connect(s_in["in"])
            s_out["out"].connect(p_in["in0"])
            a_out["out"].connect(p_in["in1"])
            return i_in, p_out

        parts = [siso_sequential([conv(channels, 3, bias=False, padding=1), bn()])]
        for s in range(3):
            cs = channels * 2 ** s
            if s > 0:
                parts.append(reduction(cs))
            parts += [cell(cs) for _ in range(cells_per_stage)]
        parts += [bn(), relu(), global_pool(), fc(_check_n_classes(n_classes))]
        return siso_sequential(parts)

    space.product = True  # type: ignore[attr-defined]  # six edges made up front, read by the closed cells
    return space
