"""Cross-check our OTMANN against the authors' published implementation (dragonfly-opt).

dragonfly-opt lives in its own environment (never in pyproject); create it once with

    uv venv /work/venvs/dragonfly --python 3.11
    uv pip install --python /work/venvs/dragonfly/bin/python "numpy<1.24" "setuptools<60" wheel scipy pot future six
    uv pip install --python /work/venvs/dragonfly/bin/python --no-build-isolation dragonfly-opt

(dragonfly-opt 0.1.7's setup.py imports numpy, so it is built without isolation; numpy < 1.24
because dragonfly still uses ``np.float``/``long``-era APIs; its optional Fortran DIRECT
extension is not needed). Then, from the repository root:

    OMP_NUM_THREADS=1 .venv/bin/python studies/crosscheck_otmann_dragonfly.py [--random 40] [--seed 0] [--time 100]

This process (our environment) runs itself under ``--dragonfly-python`` with ``--dragonfly-side``:
that child builds the authors' example networks (``dragonfly/nn/nn_examples.py``:
``generate_cnn_architectures``, ``generate_mlp_architectures('reg')`` and ``('class')``, the
networks of their unit tests) plus ``--random`` networks grown from them by their own modifiers
(``generate_many_neural_networks``, seeded), computes the authors' distances with
``otmann.get_otmann_distance_computer_from_args(nn_type, 1.0, [1]*4, nu_strs, 'lp-emd')`` and
prints the networks (topologically ordered, as dragonfly stores them) and the distances as
JSON. We convert each network to a LayerGraph, compute ``otmann_matrix`` with the same nu_strs,
and report the largest absolute and relative differences of d and d-bar. ``--time N`` also
times both implementations on an N x N matrix of dragonfly-grown CNNs.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

NUS = (0.1, 0.25, 0.61, 1.5)   # dragonfly's default struct_coeffs (dragonfly/nn/nn_gp.py)
DEFAULT_DRAGONFLY_PYTHON = "/work/venvs/dragonfly/bin/python"


# -- the dragonfly side (runs in the dragonfly venv) ----------------------------------------------
def _dragonfly_side(args: argparse.Namespace) -> None:
    import warnings

    warnings.filterwarnings("ignore")
    import numpy as np
    from dragonfly.nn import nn_examples, otmann

    def export(nn) -> dict:
        n = nn.num_layers
        edges = sorted((int(i), int(j)) for (i, j) in nn.conn_mat.keys())
        units = [None if u is None or (isinstance(u, float) and not np.isfinite(u)) else int(u)
                 for u in nn.num_units_in_each_layer]
        strides = list(getattr(nn, "strides", [None] * n))
        return {"labels": list(nn.layer_labels), "units": units, "edges": edges,
                "strides": [None if s is None else int(s) for s in strides]}

    def distances(nn_type: str, nets: list) -> tuple[list, list, float]:
        comp = otmann.get_otmann_distance_computer_from_args(nn_type, 1.0, [1.0] * len(NUS), list(NUS), "lp-emd")
        t = time.perf_counter()
        res = comp(nets, nets)   # [lp(nu0), emd(nu0), lp(nu1), ...], each n x n
        dt = time.perf_counter() - t
        return [r.tolist() for r in res[0::2]], [r.tolist() for r in res[1::2]], dt

    out = {}
    families = [("cnn", "cnn", nn_examples.generate_cnn_architectures),
                ("mlp-reg", "mlp", lambda: nn_examples.generate_mlp_architectures("reg")),
                ("mlp-class", "mlp", lambda: nn_examples.generate_mlp_architectures("class"))]
    for nn_type, kind, make in families:
        np.random.seed(args.seed)
        nets = make()
        if args.random:
            nets = nets + nn_examples.generate_many_neural_networks(nn_type, args.random)
        D, Dbar, dt = distances(nn_type, nets)
        out[nn_type] = {"kind": kind, "nets": [export(x) for x in nets], "D": D, "Dbar": Dbar, "seconds": dt}
    if args.time:
        np.random.seed(args.seed + 1)
        nets = nn_examples.generate_many_neural_networks("cnn", args.time)
        D, Dbar, dt = distances("cnn", nets)
        out["timing"] = {"kind": "cnn", "nets": [export(x) for x in nets], "D": D, "Dbar": Dbar, "seconds": dt}
    json.dump(out, sys.stdout)


# -- our side ---------------------------------------------------------------------------------------
def main() -> None:
    """Run the dragonfly child, recompute with benchsuite, print the largest differences."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dragonfly-python", default=DEFAULT_DRAGONFLY_PYTHON)
    ap.add_argument("--dragonfly-side", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--random", type=int, default=40, help="extra networks per family grown by dragonfly's modifiers")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time", type=int, default=0, help="also time an N x N matrix of grown CNNs")
    args = ap.parse_args()
    if args.dragonfly_side:
        _dragonfly_side(args)
        return

    import numpy as np

    from benchsuite.architectures import otmann as O
    from benchsuite.architectures.layer_graph import LayerGraph

    cmd = [args.dragonfly_python, __file__, "--dragonfly-side", "--random", str(args.random),
           "--seed", str(args.seed), "--time", str(args.time)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"dragonfly side failed ({' '.join(cmd)}):\n{proc.stderr[-3000:]}")
    data = json.loads(proc.stdout)
    O._solver()  # import POT outside the timings
    worst = 0.0
    for name, fam in data.items():
        graphs = [LayerGraph(fam["kind"], tuple(x["labels"]), tuple(x["units"]),
                             tuple(tuple(e) for e in x["edges"]),
                             tuple(x["strides"]) if fam["kind"] == "cnn" else None) for x in fam["nets"]]
        O._prepare_cached.cache_clear()
        t = time.perf_counter()
        D, Dbar = O.otmann_matrix(graphs, None, NUS)
        ours = time.perf_counter() - t
        Dd, Dbd = np.array(fam["D"]), np.array(fam["Dbar"])
        abs_d = float(np.abs(D - Dd).max())
        # relative to d where d is a real distance (>= 1 unit of mass); dragonfly's self
        # distances are round-off (~1e-9) where ours are exactly 0
        rel_d = float((np.abs(D - Dd) / np.maximum(np.abs(Dd), 1.0)).max())
        abs_b = float(np.abs(Dbar - Dbd).max())
        worst = max(worst, rel_d, abs_b)
        n = len(graphs)
        print(f"{name:9s} {n:3d} networks ({n * (n - 1) // 2} pairs x {len(NUS)} nu_str): "
              f"max |d - d_dfly| = {abs_d:.3g} (max relative {rel_d:.3g}, largest d {Dd.max():.4g}); "
              f"max |dbar - dbar_dfly| = {abs_b:.3g};  time ours {1e3 * ours:.0f} ms, dragonfly {1e3 * fam['seconds']:.0f} ms")
    print(f"largest difference (relative d or absolute dbar): {worst:.3g}")


if __name__ == "__main__":
    main()
