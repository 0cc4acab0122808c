"""Compile a fully specified DeepArchitect space into a ``torch.nn.Module`` (deeparchitect.txt App. C, E.1).

Algorithm 4 (Forward): basic modules are visited in topological order; each one's
operation is instantiated from its property values and the *values of its inputs* (the
paper's ``compile_fn(di, dh)``), so shapes are inferred lazily from a dummy input
(batch of 2 zeros, every layer in eval mode, so nothing random is drawn and no
BatchNorm statistics move); the first real forward then runs the same layers. Parameter
counts depend only on the value list and the input shape.

Inputs of a module are passed in the natural order of their local names (``in0, in1, ...,
in10``), the paper's sorted-local-name rule read numerically so that ``in10`` follows ``in9``.

TensorFlow's ``'same'`` padding (the authors' spaces were written for TensorFlow) is
reproduced exactly: output size ``ceil(n / stride)``, padding split with the extra cell at
the end; max pooling ignores padded cells and average pooling averages real cells only.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ...errors import InvalidConfigError
from .core import BasicModule, Graph


def _pair(v: Any) -> tuple[int, int]:
    if isinstance(v, (list, tuple)):
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _same_pads(size: Sequence[int], kernel: tuple[int, int], stride: tuple[int, int],
               dilation: tuple[int, int] = (1, 1)) -> tuple[int, int, int, int]:
    """TensorFlow 'SAME' padding as (left, right, top, bottom)."""
    pads = []
    for n, k, s, d in zip(size, kernel, stride, dilation):
        out = math.ceil(n / s)
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    (top, bottom), (left, right) = pads
    return left, right, top, bottom


class _Padded(nn.Module):
    """An operation after explicit (possibly asymmetric) padding."""

    def __init__(self, pads: tuple[int, int, int, int], inner: nn.Module, value: float = 0.0):
        super().__init__()
        self.pads, self.value, self.inner = pads, value, inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(F.pad(x, self.pads, value=self.value))


class _SameAvgPool(nn.Module):
    """Average pooling with asymmetric 'same' padding that averages real cells only."""

    def __init__(self, kernel: tuple[int, int], stride: tuple[int, int], pads: tuple[int, int, int, int]):
        super().__init__()
        self.kernel, self.stride, self.pads = kernel, stride, pads

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ones = torch.ones_like(x[:1, :1])
        s = F.avg_pool2d(F.pad(x, self.pads), self.kernel, self.stride)
        c = F.avg_pool2d(F.pad(ones, self.pads), self.kernel, self.stride)
        return s / c


def _conv(c_in: int, c_out: int, kernel: Any, stride: Any, dilation: Any, bias: bool, padding: Any,
          size: Sequence[int], groups: int = 1) -> nn.Module:
    k, s, d = _pair(kernel), _pair(stride), _pair(dilation)
    if padding == "same":
        left, right, top, bottom = _same_pads(size, k, s, d)
        if left == right and top == bottom:
            return nn.Conv2d(c_in, c_out, k, s, padding=(top, left), dilation=d, bias=bias, groups=groups)
        return _Padded((left, right, top, bottom), nn.Conv2d(c_in, c_out, k, s, dilation=d, bias=bias, groups=groups))
    if padding == "valid":
        padding = 0
    return nn.Conv2d(c_in, c_out, k, s, padding=_pair(padding), dilation=d, bias=bias, groups=groups)


def _pool(kind: str, kernel: Any, stride: Any, padding: Any, size: Sequence[int],
          count_include_pad: bool = False) -> nn.Module:
    k, s = _pair(kernel), _pair(stride)
    if padding == "same":
        left, right, top, bottom = _same_pads(size, k, s)
        if left == right and top == bottom and left <= k[1] // 2 and top <= k[0] // 2:
            if kind == "max":
                return nn.MaxPool2d(k, s, padding=(top, left))
            return nn.AvgPool2d(k, s, padding=(top, left), count_include_pad=False)
        if kind == "max":
            return _Padded((left, right, top, bottom), nn.MaxPool2d(k, s), value=-math.inf)
        return _SameAvgPool(k, s, (left, right, top, bottom))
    p = 0 if padding == "valid" else _pair(padding)
    if kind == "max":
        return nn.MaxPool2d(k, s, padding=p)
    return nn.AvgPool2d(k, s, padding=p, count_include_pad=bool(count_include_pad))


class _Seq(nn.Sequential):
    """``nn.Sequential`` that drops ``None`` entries (optional activations)."""

    def __init__(self, *mods: nn.Module | None):
        super().__init__(*[m for m in mods if m is not None])


class _Lambda(nn.Module):
    """A parameter-free function of the inputs."""

    def __init__(self, fn: Any, label: str):
        super().__init__()
        self.fn, self.label = fn, label

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        return self.fn(*xs)

    def extra_repr(self) -> str:
        return self.label


def _add(*xs: torch.Tensor) -> torch.Tensor:
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out


def _add_truncate(*xs: torch.Tensor) -> torch.Tensor:
    c = min(x.shape[1] for x in xs)  # the authors' Nasbench ``add``: keep the fewest channels
    return _add(*[x[:, :c] for x in xs])


class _CheckFilters(nn.Module):
    """Identity, or a 1x1 convolution when the channels or the stride must change (Nasnet)."""

    def __init__(self, c_in: int, filters: int, stride: int, size: Sequence[int]):
        super().__init__()
        self.conv = (_conv(c_in, filters, 1, stride, 1, True, "same", size)
                     if c_in != filters or stride > 1 else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x if self.conv is None else self.conv(x)


class _FactorizedReduction(nn.Module):
    """Nasnet's ``maybe_factorized_reduction``: bring ``in0`` to ``in1``'s shape."""

    def __init__(self, shape0: Sequence[int], shape1: Sequence[int], add_relu: bool):
        super().__init__()
        c0, h0 = shape0[0], shape0[1]
        c1, h1 = shape1[0], shape1[1]
        self.add_relu = add_relu
        self.mode = "same" if (h0 == h1 and c0 == c1) else "conv" if h0 == h1 else "reduce"
        if self.mode == "conv":
            self.conv = nn.Conv2d(c0, c1, 1)
            self.bn = nn.BatchNorm2d(c1)
        elif self.mode == "reduce":
            self.conv1 = nn.Conv2d(c0, c1 // 2, 1)
            self.conv2 = nn.Conv2d(c0, c1 // 2, 1)
            self.bn = nn.BatchNorm2d(2 * (c1 // 2))

    def forward(self, x: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        if self.add_relu:
            x = F.relu(x)
        if self.mode == "same":
            return x
        if self.mode == "conv":
            return self.bn(self.conv(x))
        p1 = self.conv1(F.avg_pool2d(x, 1, 2))
        p2 = self.conv2(F.avg_pool2d(F.pad(x, (0, 1, 0, 1))[:, :, 1:, 1:], 1, 2))
        return self.bn(torch.cat([p1, p2], dim=1))


class DropPath(nn.Module):
    """Nasnet drop path: keep probability ramps from 1 to ``1 - ratio (1 - keep)`` as ``progress`` goes 0 -> 1.

    The authors drive ``progress`` by the global step; it stays 0 here (inactive) unless a
    trainer sets it.
    """

    def __init__(self, cell_ratio: float, keep_prob: float):
        super().__init__()
        self.final_keep = 1.0 - cell_ratio * (1.0 - keep_prob)
        self.progress = 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keep = 1.0 - self.progress * (1.0 - self.final_keep)
        if not self.training or keep >= 1.0:
            return x
        mask = torch.floor(keep + torch.rand(x.shape[0], 1, 1, 1, device=x.device, dtype=x.dtype))
        return x / keep * mask


def _relu_if(act: Any) -> nn.Module | None:
    return nn.ReLU() if act == "relu" else None


def _instantiate(m: BasicModule, xs: list[torch.Tensor]) -> nn.Module:
    """The layer of a basic module given its property values and its input values (``compile_fn``)."""
    p = m.props()
    op = m.op
    x = xs[0] if xs else None
    shape = tuple(x.shape[1:]) if x is not None else ()
    size = shape[1:3]
    if op == "conv2d":
        return _Seq(_conv(shape[0], p["filters"], p["kernel"], p["stride"], p["dilation"], p["bias"], p["padding"],
                          size), _relu_if(p.get("act")))
    if op == "sep_conv2d":
        depth = _conv(shape[0], shape[0], p["kernel"], p["stride"], 1, False, "same", size, groups=shape[0])
        return _Seq(depth, nn.Conv2d(shape[0], p["filters"], 1, bias=p["bias"]), _relu_if(p.get("act")))
    if op == "depthwise_conv2d":
        return _Seq(_conv(shape[0], shape[0], p["kernel"], p["stride"], 1, p["bias"], "same", size, groups=shape[0]),
                    _relu_if(p.get("act")))
    if op == "batch_norm":
        return nn.BatchNorm2d(shape[0]) if len(shape) == 3 else nn.BatchNorm1d(shape[0])
    if op == "relu":
        return nn.ReLU()
    if op == "max_pool2d":
        return _pool("max", p["kernel"], p["stride"], p["padding"], size)
    if op == "avg_pool2d":
        return _pool("avg", p["kernel"], p["stride"], p["padding"], size, p.get("count_include_pad", False))
    if op == "global_avg_pool":
        return _Lambda(lambda t: t.mean(dim=(2, 3)), "global average pool")
    if op == "flatten":
        return nn.Flatten()
    if op == "fc":
        if len(shape) != 1:
            raise InvalidConfigError(f"module {m.name}: a fully connected layer needs a vector input, got shape "
                                     f"{shape}")
        return nn.Linear(shape[0], p["units"])
    if op == "dropout":
        return nn.Dropout(p["rate"])
    if op == "add":
        return _Lambda(_add, "add")
    if op == "add_truncate":
        return _Lambda(_add_truncate, "add (truncate channels)")
    if op == "concat":
        return _Lambda(lambda *t: torch.cat(t, dim=1) if len(t) > 1 else t[0], "concat")
    if op == "identity":
        return nn.Identity()
    if op == "zeros":
        return _Lambda(lambda t: t * 0.0, "zero (x * 0)")
    if op == "check_filters":
        return _CheckFilters(shape[0], p["filters"], p["stride"], size)
    if op == "factorized_reduction":
        return _FactorizedReduction(shape, tuple(xs[1].shape[1:]), bool(p["relu"]))
    if op == "drop_path":
        return DropPath(p["cell_ratio"], p["keep_prob"])
    raise InvalidConfigError(f"module {m.name}: no PyTorch implementation for operation {op!r}")


def _natural(name: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


class DANetwork(nn.Module):
    """A compiled architecture: layers in topological order and the wiring between them."""

    def __init__(self, layers: list[nn.Module], wiring: list[list[int]], names: list[str], out_index: int):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.wiring = wiring  # per layer: indices of its inputs' layers (-1: the network input)
        self.names = names
        self.out_index = out_index
        last_use = {}
        for k, srcs in enumerate(wiring):
            for s in srcs:
                last_use[s] = k
        # free each activation after its last consumer (memory at full size)
        self._release = [[s for s in set(srcs) if s >= 0 and last_use[s] == k and s != out_index]
                         for k, srcs in enumerate(wiring)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        vals: list[torch.Tensor | None] = [None] * len(self.layers)
        for k, (layer, srcs) in enumerate(zip(self.layers, self.wiring)):
            vals[k] = layer(*[x if s < 0 else vals[s] for s in srcs])
            for s in self._release[k]:
                vals[s] = None
        out = vals[self.out_index]
        assert out is not None
        return out


def compile_graph(g: Graph, in_shape: Sequence[int]) -> DANetwork:
    """The network of a terminal space, built layer by layer on a dummy batch of shape ``(2, *in_shape)``."""
    if set(g.inputs) != {"in"} or set(g.outputs) != {"out"}:
        raise InvalidConfigError(f"only single-input single-output spaces compile to a network; this one has inputs "
                                 f"{sorted(g.inputs)} and outputs {sorted(g.outputs)}")
    mods = g.basic_modules()
    space_in = g.inputs["in"]
    index: dict[int, int] = {}
    order: list[BasicModule] = []
    # topological order: depth-first post-order from the output, inputs in natural local-name order
    stack: list[tuple[BasicModule, bool]] = [(g.outputs["out"].module, False)]  # type: ignore[list-item]
    on_path: set[int] = set()
    while stack:
        m, expanded = stack.pop()
        if id(m) in index:
            continue
        if expanded:
            on_path.discard(id(m))
            index[id(m)] = len(order)
            order.append(m)
            continue
        if id(m) in on_path:
            raise InvalidConfigError(f"module {m.name} is on a cycle; a search space must be acyclic")
        on_path.add(id(m))
        stack.append((m, True))
        for name in sorted(m.inputs, key=_natural, reverse=True):
            inp = m.inputs[name]
            if inp.src is not None and id(inp.src.module) not in index:
                stack.append((inp.src.module, False))  # type: ignore[arg-type]
    assert len(order) <= len(mods)
    for m in order:
        if len(m.outputs) != 1:
            raise InvalidConfigError(f"module {m.name}: the PyTorch backend supports single-output modules only")
    wiring: list[list[int]] = []
    layers: list[nn.Module] = []
    vals: list[torch.Tensor] = []
    x = torch.zeros((2, *in_shape))
    with torch.no_grad():
        for m in order:
            srcs = []
            for name in sorted(m.inputs, key=_natural):
                inp = m.inputs[name]
                if inp.src is None:
                    if inp is not space_in:
                        raise InvalidConfigError(f"module {m.name} leaves input {name!r} unconnected")
                    srcs.append(-1)
                else:
                    srcs.append(index[id(inp.src.module)])
            xs = [x if s < 0 else vals[s] for s in srcs]
            try:
                layer = _instantiate(m, xs)
                layer.eval()
                y = layer(*xs)
            except InvalidConfigError:
                raise
            except (RuntimeError, ValueError) as exc:
                shapes = [tuple(t.shape[1:]) for t in xs]
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise InvalidConfigError(f"module {m.name} ({m.op}) fails on input shape(s) {shapes}: {first}; "
                                         f"use a larger in_shape") from None
            layers.append(layer)
            wiring.append(srcs)
            vals.append(y)
    net = DANetwork(layers, wiring, [m.name for m in order], index[id(g.outputs["out"].module)])
    net.train()
    return net
