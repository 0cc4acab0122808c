"""A protocol's ``published:`` block: the paper's numbers as data, checked like the rest of the protocol.

One block (or a list of blocks, one per paper or table) at the end of a protocol file::

    published:
      paper: COMBO                       # the paper's short name (the scorecard's `paper` column)
      source: combo.txt Table 1 (Sec. 4.1)   # where the numbers are printed; a cell may override it
      error_kind: standard_error         # standard_error | standard_deviation | not_stated
      runs: 25                           # runs behind each number (null: the paper does not say)
      scale: 1.0                         # paper units = offset + scale * our reported quantity
      offset: 0.0
      higher_is_better: false            # in paper units
      gpu: {evaluation_s: 600, basis: "..."}   # GPU-sized protocols: GPU seconds per evaluation,
                                         # or per benchmark label: {evaluation_s: {da_flat: 950, ...}}
      cells:
        - {benchmark: ising_lambda0, optimizer: smac, method: SMAC, value: 0.1516, error: 0.0404}
        - {benchmark: maxsat60, optimizer: null, method: BOCS-SA3, value: -152.07, error: 8.52,
           not_run: "BOCS-SA3 (third-order BOCS) is not in the suite"}
      claims:                            # figure-only results, as the paper states them
        - {kind: factor, benchmark: svm_mnist, optimizer: fabolas, baseline: mtbo, target: optimum,
           value: 10, statement: "roughly another order of magnitude faster than MTBO"}
        - {kind: equal, benchmark: da_nb201_cifar10, optimizers: [da_random, da_mcts],
           statement: "no searcher beats another by more than its spread"}

A cell's ``optimizer`` is a label of the protocol (an unavailable plugin's label counts), or null
with a ``not_run`` reason when the suite has no such method; ``method`` is the paper's own name
for it. ``note`` is shown for every verdict.

Fidelity: every cell and claim says how faithful its setup is to the paper's (``fidelity``, set on the
block and overridden per cell or claim):

- ``faithful``: the paper's setup as far as its text and the authors' released code say (no differences);
- ``adapted``: the paper's method in a setup that differs in named ways: ``differences`` is a list of one-line
  statements, each naming what differs, ours then theirs ("search signal: 200-epoch validation, theirs
  12-epoch"); the block's differences come first in every cell's;
- ``variant``: a method or setup of ours beside the paper's (BOCS-SA beside the paper's BOCS-SDP; COMBO's
  problems on our own instances): shown with its verdict, never counted in the headline.

A number that two protocols compare with is counted once, in the closer (``benchsuite.analysis.scorecard``'s
``mark_counted``). Where counting named differences would choose wrongly (one difference may weigh more than
two), the closer protocol's block says so: ``closer_than: {protocol: why}``, one line of reason each.

A cell may give ``optimum``, the benchmark's known optimum in the paper's units: when the published value and
our mean both equal it at the paper's printed precision, the verdict is ``match`` by the same-optimum rule
(``benchsuite.analysis.scorecard``) whatever the error bars (a printed ``+- 0`` and runs that all end at the
optimum compare nothing else). ``retrained: true`` compares a cell with the runs' retrained value (the
protocol's ``retrain:`` step, NASBOT's "best model retrained") instead of the search's. A factor claim's ``target`` is ``optimum`` (the best value any run of the benchmark reached) or a
number in our units, plus ``tolerance``; its factor is the baseline's time to the target over the optimizer's.
Mistakes raise :class:`ProtocolError`, one line naming the key.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

ERROR_KINDS = ("standard_error", "standard_deviation", "not_stated")
FIDELITIES = ("faithful", "adapted", "variant")  # from the closest to the paper to ours beside it
CLAIM_KINDS = ("factor", "equal")
_BLOCK_KEYS = ("paper", "source", "error_kind", "runs", "scale", "offset", "higher_is_better", "gpu", "fidelity",
               "differences", "closer_than", "note", "cells", "claims")
_CELL_KEYS = ("benchmark", "optimizer", "method", "value", "error", "error_kind", "runs", "source", "note",
              "not_run", "fidelity", "differences", "optimum", "retrained")
_CLAIM_KEYS = ("kind", "benchmark", "optimizer", "baseline", "optimizers", "target", "tolerance", "value", "statement",
               "source", "note", "runs", "fidelity", "differences")
_GPU_KEYS = ("evaluation_s", "basis")


@dataclass(frozen=True)
class PublishedCell:
    """One number of a paper's table: (benchmark label, optimizer label) -> value +- error."""

    paper: str
    source: str
    benchmark: str
    optimizer: str | None
    method: str
    value: float
    error: float | None
    error_kind: str
    runs: int | None
    scale: float = 1.0
    offset: float = 0.0
    higher_is_better: bool = False
    note: str = ""
    not_run: str = ""
    fidelity: str = "faithful"  # FIDELITIES
    differences: tuple[str, ...] = ()  # what an adapted (or variant) setup changes, one line each
    closer_than: tuple[tuple[str, str], ...] = ()  # (protocol, why): the block's ``closer_than``
    optimum: float | None = None  # the benchmark's known optimum in paper units (the same-optimum rule)
    retrained: bool = False  # compared with the runs' retrained value (the protocol's `retrain:` step)

    @property
    def variant(self) -> bool:
        """Ours beside the paper's method: shown, never counted."""
        return self.fidelity == "variant"


@dataclass(frozen=True)
class PublishedClaim:
    """A figure-only result as the paper states it: a speed-up factor, or no difference between methods."""

    paper: str
    source: str
    kind: str
    benchmark: str
    statement: str
    optimizer: str = ""
    baseline: str = ""
    optimizers: tuple[str, ...] = ()
    target: str | float = "optimum"
    tolerance: float = 0.0
    value: float | None = None
    runs: int | None = None
    scale: float = 1.0
    offset: float = 0.0
    higher_is_better: bool = False
    note: str = ""
    fidelity: str = "faithful"  # FIDELITIES
    differences: tuple[str, ...] = ()
    closer_than: tuple[tuple[str, str], ...] = ()  # (protocol, why): the block's ``closer_than``

    @property
    def variant(self) -> bool:
        """The paper's statement checked on a method or setup of ours: shown, never counted."""
        return self.fidelity == "variant"


@dataclass(frozen=True)
class Published:
    """Every published cell and claim of a protocol, and how to estimate its GPU time."""

    cells: tuple[PublishedCell, ...] = ()
    claims: tuple[PublishedClaim, ...] = ()
    gpu_evaluation_s: float | Mapping[str, float] | None = None
    gpu_basis: str = ""
    papers: tuple[str, ...] = field(default=())

    def gpu_seconds(self, benchmark: str) -> float | None:
        """GPU seconds of one evaluation of ``benchmark`` (a label), or None where the block gives none."""
        per = self.gpu_evaluation_s
        if isinstance(per, Mapping):
            return per.get(benchmark)
        return per


def _gpu_seconds(c: Any, key: str, raw: Any, benchmarks: Sequence[str]) -> float | dict[str, float]:
    """``gpu.evaluation_s``: one positive number, or one per benchmark label (every label of the protocol)."""
    if not isinstance(raw, Mapping):
        return c.positive(key, raw)
    unknown = sorted(set(map(str, raw)) - set(benchmarks))
    if unknown:
        raise c.fail(key, f"unknown benchmark label(s) {unknown}; the protocol's are {list(benchmarks)}")
    missing = [b for b in benchmarks if b not in raw]
    if missing:
        raise c.fail(key, f"no seconds for benchmark(s) {missing}: give every label, or one number for all")
    return {str(b): c.positive(f"{key}.{b}", v) for b, v in raw.items()}


def parse_published(c: Any, raw: Any, benchmarks: Sequence[str], optimizers: Sequence[str]) -> Published:
    """Validate a ``published:`` block against the protocol's benchmark and optimizer labels.

    ``c`` is the protocol's checker (its ``fail`` names the file); an error names the key.
    """
    if raw is None:
        return Published()
    blocks = raw if isinstance(raw, list) else [raw]
    if not blocks:
        raise c.fail("published", "expected a mapping or a non-empty list of mappings")
    cells: list[PublishedCell] = []
    claims: list[PublishedClaim] = []
    gpu_s, basis, papers = None, "", []
    for i, block in enumerate(blocks):
        key = "published" if not isinstance(raw, list) else f"published[{i}]"
        block = c.keys(key, block, _BLOCK_KEYS, required=("paper", "source"))
        paper = _text(c, f"{key}.paper", block["paper"])
        papers.append(paper)
        source = _text(c, f"{key}.source", block["source"])
        kind = c.choice(f"{key}.error_kind", block.get("error_kind", "not_stated"), ERROR_KINDS)
        runs = _runs(c, f"{key}.runs", block.get("runs"))
        scale = _finite(c, f"{key}.scale", block.get("scale", 1.0))
        if scale == 0:
            raise c.fail(f"{key}.scale", "must not be 0")
        offset = _finite(c, f"{key}.offset", block.get("offset", 0.0))
        hib = block.get("higher_is_better", False)
        if not isinstance(hib, bool):
            raise c.fail(f"{key}.higher_is_better", f"expected true or false, got {hib!r}")
        if block.get("gpu") is not None:
            g = c.keys(f"{key}.gpu", block["gpu"], _GPU_KEYS, required=_GPU_KEYS)
            gpu_s = _gpu_seconds(c, f"{key}.gpu.evaluation_s", g["evaluation_s"], benchmarks)
            basis = _text(c, f"{key}.gpu.basis", g["basis"])
        block_fidelity = c.choice(f"{key}.fidelity", block.get("fidelity", "faithful"), FIDELITIES)
        block_diffs = _differences(c, f"{key}.differences", block.get("differences"))
        closer = _closer_than(c, f"{key}.closer_than", block.get("closer_than"))
        block_note = _text(c, f"{key}.note", block["note"]) if block.get("note") is not None else ""
        block_note = "; ".join(filter(None, [block_note,
                                             *(f"closer to the paper than {p}: {why}" for p, why in closer)]))
        if not block.get("cells") and not block.get("claims"):
            raise c.fail(key, "give `cells:` or `claims:` (the paper's numbers)")
        for j, cell in enumerate(_list(c, f"{key}.cells", block.get("cells"))):
            k = f"{key}.cells[{j}]"
            cell = c.keys(k, cell, _CELL_KEYS, required=("benchmark", "optimizer", "method", "value"))
            bench = _label_in(c, f"{k}.benchmark", cell["benchmark"], benchmarks, "benchmark")
            not_run = _text(c, f"{k}.not_run", cell["not_run"]) if cell.get("not_run") is not None else ""
            opt = cell["optimizer"]
            if opt is None:
                if not not_run:
                    raise c.fail(f"{k}.optimizer", "null only with a `not_run:` reason (the method the suite lacks)")
            else:
                opt = _label_in(c, f"{k}.optimizer", opt, optimizers, "optimizer")
            fidelity, diffs = _fidelity(c, k, cell, block_fidelity, block_diffs)
            optimum = None if cell.get("optimum") is None else _finite(c, f"{k}.optimum", cell["optimum"])
            retrained = cell.get("retrained", False)
            if not isinstance(retrained, bool):
                raise c.fail(f"{k}.retrained", f"expected true or false, got {retrained!r}")
            error = None if cell.get("error") is None else _finite(c, f"{k}.error", cell["error"])
            if error is not None and error < 0:
                raise c.fail(f"{k}.error", f"must be >= 0, got {error}")
            cells.append(PublishedCell(
                paper, _text(c, f"{k}.source", cell.get("source", source)), bench, opt,
                _text(c, f"{k}.method", cell["method"]), _finite(c, f"{k}.value", cell["value"]), error,
                c.choice(f"{k}.error_kind", cell.get("error_kind", kind), ERROR_KINDS),
                _runs(c, f"{k}.runs", cell.get("runs", runs)), scale, offset, hib,
                "; ".join(filter(None, [block_note, _text(c, f"{k}.note", cell["note"])
                                        if cell.get("note") is not None else ""])), not_run, fidelity, diffs,
                closer, optimum, retrained))
        for j, claim in enumerate(_list(c, f"{key}.claims", block.get("claims"))):
            k = f"{key}.claims[{j}]"
            claim = c.keys(k, claim, _CLAIM_KEYS, required=("kind", "benchmark", "statement"))
            ckind = c.choice(f"{k}.kind", claim["kind"], CLAIM_KINDS)
            bench = _label_in(c, f"{k}.benchmark", claim["benchmark"], benchmarks, "benchmark")
            fidelity, diffs = _fidelity(c, k, claim, block_fidelity, block_diffs)
            common = dict(paper=paper, source=_text(c, f"{k}.source", claim.get("source", source)), kind=ckind,
                          benchmark=bench, statement=_text(c, f"{k}.statement", claim["statement"]),
                          runs=_runs(c, f"{k}.runs", claim.get("runs", runs)), scale=scale, offset=offset,
                          higher_is_better=hib, fidelity=fidelity, differences=diffs, closer_than=closer,
                          note="; ".join(filter(None, [block_note, _text(c, f"{k}.note", claim["note"])
                                                       if claim.get("note") is not None else ""])))
            if ckind == "factor":
                for req in ("optimizer", "baseline", "value"):
                    if claim.get(req) is None:
                        raise c.fail(f"{k}.{req}", "required key is missing (a factor claim compares two methods)")
                target = claim.get("target", "optimum")
                if target != "optimum":
                    target = _finite(c, f"{k}.target", target)
                tol = _finite(c, f"{k}.tolerance", claim.get("tolerance", 0.0))
                if tol < 0:
                    raise c.fail(f"{k}.tolerance", f"must be >= 0, got {tol}")
                value = _finite(c, f"{k}.value", claim["value"])
                if value <= 0:
                    raise c.fail(f"{k}.value", f"a factor must be positive, got {value}")
                claims.append(PublishedClaim(
                    **common, optimizer=_label_in(c, f"{k}.optimizer", claim["optimizer"], optimizers, "optimizer"),
                    baseline=_label_in(c, f"{k}.baseline", claim["baseline"], optimizers, "optimizer"),
                    target=target, tolerance=tol, value=value))
            else:
                opts = claim.get("optimizers")
                if not isinstance(opts, list) or len(opts) < 2:
                    raise c.fail(f"{k}.optimizers", "an `equal` claim needs a list of at least two optimizer labels")
                labels = tuple(_label_in(c, f"{k}.optimizers[{n}]", o, optimizers, "optimizer")
                               for n, o in enumerate(opts))
                claims.append(PublishedClaim(**common, optimizers=labels))
    seen: set[tuple[str, str | None, str]] = set()
    for cell in cells:
        ident = (cell.benchmark, cell.optimizer, cell.method)
        if ident in seen:
            raise c.fail("published", f"cell ({cell.benchmark}, {cell.optimizer}, {cell.method}) is given twice")
        seen.add(ident)
    return Published(tuple(cells), tuple(claims), gpu_s, basis, tuple(dict.fromkeys(papers)))


def _differences(c: Any, key: str, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise c.fail(key, "expected a non-empty list of one-line differences (what differs, ours then theirs)")
    return tuple(_text(c, f"{key}[{i}]", d) for i, d in enumerate(raw))


def _closer_than(c: Any, key: str, raw: Any) -> tuple[tuple[str, str], ...]:
    """``closer_than: {protocol: why}``: the other protocols comparing with the same numbers that this one is
    closer to the paper than, each with a one-line reason (whether they exist and share the numbers is checked
    where every protocol is known, in the scorecard)."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping) or not raw:
        raise c.fail(key, "expected a mapping {protocol: why this one is closer to the paper}")
    return tuple((_text(c, f"{key}", str(name)), _text(c, f"{key}.{name}", why)) for name, why in raw.items())


def _fidelity(c: Any, key: str, item: Mapping[str, Any], block_fidelity: str,
              block_diffs: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """A cell's or claim's fidelity class and its differences (the block's first, then its own), checked:
    an adapted setup names at least one difference, a faithful one none."""
    fidelity = c.choice(f"{key}.fidelity", item.get("fidelity", block_fidelity), FIDELITIES)
    diffs = block_diffs + _differences(c, f"{key}.differences", item.get("differences"))
    if fidelity == "adapted" and not diffs:
        raise c.fail(f"{key}.fidelity", "adapted needs `differences:`, a list naming each way the setup differs "
                                        "from the paper's (ours, then theirs)")
    if fidelity == "faithful" and diffs:
        raise c.fail(f"{key}.fidelity", f"faithful, but differences are listed ({diffs[0]!r}): make it adapted, "
                                        "or move a remark that is not a difference of setup to `note:`")
    return fidelity, diffs


def _list(c: Any, key: str, raw: Any) -> list:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise c.fail(key, f"expected a list, got {type(raw).__name__}")
    return raw


def _text(c: Any, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise c.fail(key, "expected a non-empty text (where the number comes from, or why)")
    return " ".join(value.split())


def _finite(c: Any, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise c.fail(key, f"expected a number, got {value!r}")
    if not math.isfinite(value):
        raise c.fail(key, f"must be finite, got {value}")
    return float(value)


def _runs(c: Any, key: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise c.fail(key, f"expected a positive integer or null (not stated), got {value!r}")
    return int(value)


def _label_in(c: Any, key: str, value: Any, labels: Sequence[str], what: str) -> str:
    import difflib

    if not isinstance(value, str) or value not in labels:
        close = difflib.get_close_matches(str(value), list(labels), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; the protocol's {what}s are {', '.join(labels)}"
        raise c.fail(key, f"{value!r} is not a {what} label of this protocol{hint}")
    return value

