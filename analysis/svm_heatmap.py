"""Validation-error heatmaps of the SVM-on-MNIST table, like fabolas.txt Figure 1.

    python analysis/svm_heatmap.py --table tables/svm_mnist/svm_mnist.h5 \
        --out figures/svm_mnist_heatmap.png --out figures/svm_mnist_heatmap.pdf

One panel per subset fraction s = 1/128, 1/16, 1/4, 1 (the paper's panels), showing the
mean validation error over the replicate subsets on the 20 x 20 (log C, log gamma) grid,
on one shared colour scale (blue good, yellow bad, as in the paper). Also prints a short
text summary of each panel (best error and where it is).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

PANELS = (1 / 128, 1 / 16, 1 / 4, 1.0)  # fabolas.txt Figure 1 (a)-(d)


def panel_means(path: Path, panels: tuple[float, ...] = PANELS) -> tuple[np.ndarray, np.ndarray, list, np.ndarray]:
    """(log C levels, log gamma levels, the panels' s values, mean error array (panel, C, gamma))."""
    from benchsuite.tabular import open_table

    t = open_table(path)
    log_c, log_g, s = t.axes[0], t.axes[1], t.fidelities
    mean = t.seed_mean()
    chosen, out = [], []
    for p in panels:
        k = int(np.argmin(np.abs(np.log(s) - np.log(p))))
        if not np.isclose(s[k], p):
            continue  # a small table may lack a panel
        chosen.append(float(s[k]))
        out.append(mean[:, :, k])
    return log_c, log_g, chosen, np.array(out)


def _label(s: float) -> str:
    return "1" if s == 1 else f"1/{round(1 / s)}"


def plot(path: Path, outs: list[Path]) -> str:
    """Draw the panels to every file in ``outs``; returns the text summary."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    log_c, log_g, svals, err = panel_means(path)
    fig, axes = plt.subplots(1, len(svals), figsize=(3.3 * len(svals) + 1, 3.4), squeeze=False,
                             constrained_layout=True)
    half_c, half_g = (log_c[1] - log_c[0]) / 2, (log_g[1] - log_g[0]) / 2
    extent = (log_c[0] - half_c, log_c[-1] + half_c, log_g[0] - half_g, log_g[-1] + half_g)
    lines = []
    im = None
    for ax, s, e in zip(axes[0], svals, err):
        im = ax.imshow(e.T, origin="lower", extent=extent, cmap="viridis", vmin=0.0, vmax=0.9, aspect="auto")
        ax.set_title(f"s = {_label(s)}")
        ax.set_xlabel("log C")
        if ax is axes[0, 0]:
            ax.set_ylabel("log gamma")
        if np.isfinite(e).any():
            i, j = np.unravel_index(np.nanargmin(e), e.shape)
            ax.plot(log_c[i], log_g[j], "r+", ms=9, mew=2)
            fin = e[np.isfinite(e)]
            lines.append(f"s = {_label(s):>5}: best {e[i, j]:.4f} at (log C, log gamma) = ({log_c[i]:.2f}, "
                         f"{log_g[j]:.2f}); of {fin.size} grid points: {np.mean(fin < 0.1):.0%} below 0.1, "
                         f"{np.mean(fin < 0.2):.0%} below 0.2, {np.mean(fin > 0.85):.0%} at chance level (> 0.85)")
    fig.colorbar(im, ax=axes[0].tolist(), label="validation error")
    fig.suptitle("SVM on MNIST: validation error over (log C, log gamma) by subset fraction s")
    for out in outs:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=150)
    plt.close(fig)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--table", type=Path, default=Path("tables/svm_mnist/svm_mnist.h5"))
    p.add_argument("--out", type=Path, action="append", required=True, help="output file (repeatable)")
    args = p.parse_args(argv)
    print(plot(args.table, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
