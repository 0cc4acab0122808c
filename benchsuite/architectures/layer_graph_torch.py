"""Compile a NASBOT layer graph (:class:`~benchsuite.architectures.layer_graph.LayerGraph`) to a PyTorch module.

Only the live NASBOT benchmarks import this module (it imports torch). The translation
follows the authors' TensorFlow code (kirthevasank/nasbot, the same files in
dragonfly/dragonfly ``examples/nas/cg``); nothing is copied from it:

**MLPs** (``cg/run_tensorflow.py``, ``mlp_definition``): layers are built in topological
order; the input of a layer is the concatenation of its parents' outputs (along the
feature axis) and the layer is a dense layer with bias and ``units`` outputs followed by
its activation (``relu``, ``crelu`` = [relu(x), relu(-x)], so twice ``units`` outputs,
``leaky-relu``, ``softplus``, ``elu``, ``logistic`` = sigmoid, ``tanh``). A ``linear``
decision layer is a dense layer without activation with ``n_outputs`` outputs (the
authors' one unit for regression). The output layer averages its parents (the decision
layers) and applies a final dense layer with bias (``n_outputs`` outputs). Weights start
Glorot-uniform and biases at zero (the defaults of ``tf.layers.dense``).

**CNNs** (``cg/cifar/cifar10_model.py`` and ``cifar10_model_base.py``): the input of a
layer is the concatenation of its parents along the channel axis; the authors' validity
check (``nn/neural_network.py``, ``_check_image_size_consistency``) demands that all
parents have the same image size, so there is nothing to resize, and a graph whose parents
differ is rejected here with :class:`~benchsuite.errors.InvalidConfigError`.

* ``convK``: KxK convolution without bias ('same' padding, stride 1 or 2), batch norm, ReLU.
* ``resK``: a residual unit of two KxK convolutions (conv-BN-ReLU with the layer's stride,
  then conv-BN) added to a shortcut, then ReLU. The shortcut average-pools by the stride
  and zero-pads the channels when the unit widens (the authors' "plan A").
* ``max-pool`` / ``avg-pool``: 2x2 window, stride 2, 'same' padding (the image halves,
  rounding up; average pooling ignores the padding as TensorFlow's does).
* ``fc``: global average pooling when its input is an image, then a dense layer with
  ``units`` outputs and ReLU.
* ``softmax``: global average pooling when its input is an image, then a dense layer with
  ``n_outputs`` outputs (the logits).
* output: in training mode the module returns the logits of every softmax layer (a tuple
  when there are several; the harness sums their cross entropies, as the authors'
  ``cifar10_myMain._loss_fn``); in evaluation mode it returns the log of the average of
  their softmax probabilities (the authors' prediction), i.e. the logits themselves when
  there is one softmax layer.

Batch norm uses the authors' decay 0.997 (PyTorch momentum 0.003) and epsilon 1e-5
(``cg/cifar/run_tensorflow_cifar.py``); convolutions start Glorot-uniform (the default of
``tf.layers.conv2d``).

Where we differ from the authors' code, and why:

* their softmax layer applies a ReLU to its logits (``_softmax`` calls
  ``_myFullyConnected``, which ends with a ReLU) and has 10 + 1 outputs; we output plain
  logits for the ``n_outputs`` classes, which is what a softmax layer is (their comment
  says so too);
* their ``leaky-relu`` is a plain ReLU ("Need to update tf for leaky_relu"); ours is a
  leaky ReLU with TensorFlow's slope 0.2;
* their residual unit breaks on some shapes (an odd widening leaves a channel
  mismatch; a narrowing unit pads its *residual* branch to the input's width, so the layer
  outputs more channels than its unit count; a stride-2 unit of equal width adds an
  unpooled shortcut to a halved image). Ours pads an odd widening unevenly, and narrows the
  shortcut with a 1x1 convolution without bias, so every unit has exactly ``units``
  channels at the stride's image size.

The builder is a pure function of the graph: the same graph (also after a JSON round trip)
always gives the same architecture and parameter count; the weights' values come from
torch's random state, which the training harness seeds.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import InvalidConfigError
from .layer_graph import LayerGraph

BN_MOMENTUM = 1.0 - 0.997  # authors' batch_norm_decay 0.997 (cg/cifar/run_tensorflow_cifar.py)
BN_EPS = 1e-5              # authors' batch_norm_epsilon
LEAKY_SLOPE = 0.2          # tf.nn.leaky_relu's default alpha

MLP_ACTIVATIONS = ("relu", "crelu", "leaky-relu", "softplus", "elu", "logistic", "tanh")


class CReLU(nn.Module):
    """Concatenated ReLU: ``[relu(x), relu(-x)]`` along the feature axis (``tf.nn.crelu``)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([F.relu(x), F.relu(-x)], dim=1)


def _activation(label: str) -> nn.Module:
    if label == "relu":
        return nn.ReLU()
    if label == "crelu":
        return CReLU()
    if label == "leaky-relu":
        return nn.LeakyReLU(LEAKY_SLOPE)
    if label == "softplus":
        return nn.Softplus()
    if label == "elu":
        return nn.ELU()
    if label == "logistic":
        return nn.Sigmoid()
    if label == "tanh":
        return nn.Tanh()
    raise InvalidConfigError(f"layer graph: MLP label {label!r} has no activation; use one of {list(MLP_ACTIVATIONS)}")


def _dense(n_in: int, n_out: int) -> nn.Linear:
    layer = nn.Linear(n_in, n_out, bias=True)
    nn.init.xavier_uniform_(layer.weight)  # tf.layers.dense: glorot_uniform kernel, zero bias
    nn.init.zeros_(layer.bias)
    return layer


def _conv(c_in: int, c_out: int, k: int, stride: int) -> nn.Conv2d:
    conv = nn.Conv2d(c_in, c_out, k, stride=stride, padding=k // 2, bias=False)
    nn.init.xavier_uniform_(conv.weight)  # tf.layers.conv2d: glorot_uniform kernel
    return conv


def _bn(c: int, momentum: float, eps: float) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(c, momentum=momentum, eps=eps)


class MLPNet(nn.Module):
    """An MLP layer graph: dense layers on concatenated parents, averaged decision layers, a final dense."""

    def __init__(self, g: LayerGraph, n_in: int, n_outputs: int):
        super().__init__()
        self.parents = [list(g.parents(i)) for i in range(g.n_layers)]
        layers: list[nn.Module] = [nn.Identity()]
        width = [n_in]
        for i in range(1, g.n_layers - 1):
            lab = g.labels[i]
            n_cat = sum(width[p] for p in self.parents[i])
            if lab == "linear":
                layers.append(_dense(n_cat, n_outputs))
                width.append(n_outputs)
            else:
                units = _units(g, i)
                layers.append(nn.Sequential(_dense(n_cat, units), _activation(lab)))
                width.append(units * (2 if lab == "crelu" else 1))
        self.layers = nn.ModuleList(layers)
        op_parents = self.parents[-1]
        widths = {width[p] for p in op_parents}
        if len(widths) != 1:
            raise InvalidConfigError(f"layer graph: the output's parents have different widths {sorted(widths)}; "
                                     "its parents must be the 'linear' decision layers")
        self.head = _dense(widths.pop(), n_outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs: list[torch.Tensor] = [x]
        for i in range(1, len(self.layers)):
            ps = self.parents[i]
            inp = outs[ps[0]] if len(ps) == 1 else torch.cat([outs[p] for p in ps], dim=1)
            outs.append(self.layers[i](inp))
        ps = self.parents[-1]
        avg = outs[ps[0]] if len(ps) == 1 else torch.stack([outs[p] for p in ps]).mean(dim=0)
        return self.head(avg)


class ResidualUnit(nn.Module):
    """Two KxK convolutions (conv-BN-ReLU, conv-BN) plus a shortcut, then ReLU."""

    def __init__(self, c_in: int, c_out: int, k: int, stride: int, momentum: float = BN_MOMENTUM,
                 eps: float = BN_EPS):
        super().__init__()
        self.body = nn.Sequential(_conv(c_in, c_out, k, stride), _bn(c_out, momentum, eps), nn.ReLU(),
                                  _conv(c_out, c_out, k, 1), _bn(c_out, momentum, eps))
        self.pool = (nn.AvgPool2d(stride, stride, ceil_mode=True, count_include_pad=False)
                     if stride > 1 else nn.Identity())
        self.pad = (0, 0)
        self.project: nn.Module = nn.Identity()
        if c_out > c_in:  # the authors' plan A: zero channels on both sides
            lo = (c_out - c_in) // 2
            self.pad = (lo, c_out - c_in - lo)
        elif c_in > c_out:  # ours (see the module docstring): a 1x1 projection
            self.project = nn.Conv2d(c_in, c_out, 1, bias=False)
            nn.init.xavier_uniform_(self.project.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        short = self.project(self.pool(x))
        if self.pad != (0, 0):
            short = F.pad(short, (0, 0, 0, 0, self.pad[0], self.pad[1]))
        return F.relu(self.body(x) + short)


class _Dense(nn.Module):
    """fc / softmax: global average pooling of an image input, then a dense layer (ReLU for fc)."""

    def __init__(self, n_in: int, n_out: int, relu: bool):
        super().__init__()
        self.linear = _dense(n_in, n_out)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        return F.relu(y) if self.relu else y


class CNNNet(nn.Module):
    """A CNN layer graph: channel-concatenated parents, conv/res/pool/fc layers, averaged softmax heads."""

    def __init__(self, g: LayerGraph, in_shape: Sequence[int], n_outputs: int, bn_momentum: float = BN_MOMENTUM,
                 bn_eps: float = BN_EPS):
        super().__init__()
        c0, h0, w0 = (int(v) for v in in_shape)
        self.parents = [list(g.parents(i)) for i in range(g.n_layers)]
        strides = g.strides if g.strides is not None else (None,) * g.n_layers
        # per layer: ("img", channels, h, w) or ("vec", features)
        shape: list[tuple] = [("img", c0, h0, w0)]
        self.flatten_in: list[bool] = [False]  # whether the layer pools image parents to vectors first
        layers: list[nn.Module] = [nn.Identity()]
        for i in range(1, g.n_layers - 1):
            lab = g.labels[i]
            ps = self.parents[i]
            pshapes = [shape[p] for p in ps]
            if not ps:
                raise InvalidConfigError(f"layer graph: layer {i} ({lab}) has no parents")
            if lab in ("fc", "softmax"):
                n_cat = sum(s[1] for s in pshapes)  # images are pooled to their channels
                n_out = n_outputs if lab == "softmax" else _units(g, i)
                layers.append(_Dense(n_cat, n_out, relu=lab == "fc"))
                shape.append(("vec", n_out))
                self.flatten_in.append(True)
                continue
            if any(s[0] != "img" for s in pshapes):
                raise InvalidConfigError(f"layer graph: layer {i} ({lab}) is fed by a fully connected layer; "
                                         "convolutions and pools need image inputs")
            sizes = {(s[2], s[3]) for s in pshapes}
            if len(sizes) != 1:
                raise InvalidConfigError(f"layer graph: the parents of layer {i} ({lab}) have different image sizes "
                                         f"{sorted(sizes)}; NASBOT concatenates only images of one size")
            h, w = sizes.pop()
            c_in = sum(s[1] for s in pshapes)
            self.flatten_in.append(False)
            if lab in ("max-pool", "avg-pool"):
                layers.append(nn.MaxPool2d(2, 2, ceil_mode=True) if lab == "max-pool"
                              else nn.AvgPool2d(2, 2, ceil_mode=True, count_include_pad=False))
                shape.append(("img", c_in, -(-h // 2), -(-w // 2)))
                continue
            if not (lab.startswith("conv") or lab.startswith("res")) or not lab[-1].isdigit():
                raise InvalidConfigError(f"layer graph: CNN label {lab!r} unknown at layer {i}")
            k = int(lab[4:] if lab.startswith("conv") else lab[3:])
            stride = int(strides[i] or 1)
            if stride not in (1, 2):
                raise InvalidConfigError(f"layer graph: layer {i} ({lab}) has stride {stride}; use 1 or 2")
            units = _units(g, i)
            if lab.startswith("conv"):
                layers.append(nn.Sequential(_conv(c_in, units, k, stride), _bn(units, bn_momentum, bn_eps), nn.ReLU()))
            else:
                layers.append(ResidualUnit(c_in, units, k, stride, bn_momentum, bn_eps))
            shape.append(("img", units, -(-h // stride), -(-w // stride)))
        self.layers = nn.ModuleList(layers)
        heads = self.parents[-1]
        if not heads or any(g.labels[p] != "softmax" for p in heads):
            raise InvalidConfigError("layer graph: the output's parents must all be 'softmax' layers")
        self.shapes = shape

    def forward(self, x: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, ...]:
        outs: list[torch.Tensor] = [x]
        for i in range(1, len(self.layers)):
            parts = [outs[p] for p in self.parents[i]]
            if self.flatten_in[i]:
                parts = [t.mean(dim=(2, 3)) if t.dim() == 4 else t for t in parts]
            inp = parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)
            outs.append(self.layers[i](inp))
        logits = [outs[p] for p in self.parents[-1]]
        if len(logits) == 1:
            return logits[0]
        if self.training:
            return tuple(logits)
        probs = torch.stack([torch.softmax(z.float(), dim=1) for z in logits]).mean(dim=0)
        return torch.log(probs.clamp_min(1e-30))


def _units(g: LayerGraph, i: int) -> int:
    u = g.units[i]
    if u is None or int(u) < 1:
        raise InvalidConfigError(f"layer graph: layer {i} ({g.labels[i]}) needs a positive unit count, got {u!r}")
    return int(u)


def build_network(g: LayerGraph, in_shape: int | Sequence[int], n_outputs: int,
                  bn_momentum: float = BN_MOMENTUM, bn_eps: float = BN_EPS) -> nn.Module:
    """The PyTorch module of layer graph ``g``.

    ``in_shape``: the number of input features (MLP) or (channels, height, width) (CNN);
    ``n_outputs``: regression outputs (MLP, 1 for NASBOT's data sets) or classes (CNN).
    Raises :class:`InvalidConfigError` for a graph that cannot be compiled.
    """
    if n_outputs < 1:
        raise InvalidConfigError(f"build_network: n_outputs must be >= 1, got {n_outputs}")
    if g.n_layers < 3 or g.labels[0] != "ip" or g.labels[-1] != "op":
        raise InvalidConfigError("layer graph: layer 0 must be 'ip' and the last layer 'op', with layers between")
    if g.kind == "mlp":
        n_in = int(in_shape) if isinstance(in_shape, int) else int(in_shape[-1])
        return MLPNet(g, n_in, n_outputs)
    if g.kind == "cnn":
        if isinstance(in_shape, int) or len(in_shape) != 3:
            raise InvalidConfigError(f"build_network: a CNN needs in_shape (channels, height, width), got {in_shape!r}")
        return CNNNet(g, in_shape, n_outputs, bn_momentum, bn_eps)
    raise InvalidConfigError(f"layer graph kind {g.kind!r} unknown; use 'mlp' or 'cnn'")
