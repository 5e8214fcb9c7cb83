"""Privacy-utility figure: accuracy against the epsilon each method may publish, every method of one run.

Reads JSON files such as ``benchmarks/adult.py --json`` and
``benchmarks/fashion_scattering.py --json`` write (a list of records
``{"dataset", "method", "epsilon", "accuracy": [one per seed]}``; ``epsilon``
null for non-private references, drawn as dashed lines) and draws one panel per
dataset: mean accuracy with the seeds' standard deviation as error bars,
publishable epsilon on a log axis.

Run: ``python benchmarks/figure.py benchmarks/results/adult.json benchmarks/results/fashion_mnist.json
[-o docs/images/privacy_utility.png]``
"""

import argparse
import json
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402


def load(paths):
    """Records of all ``paths``, grouped as ``{dataset: {method: [(epsilon, accuracies), ...]}}``.

    A method's point at an epsilon given by several files is the last file's (a later run of the same peer).
    """
    grouped = defaultdict(lambda: defaultdict(dict))
    for path in paths:
        with open(path) as handle:
            for record in json.load(handle):
                grouped[record["dataset"]][record["method"]][record["epsilon"]] = record["accuracy"]
    return {
        dataset: {method: list(points.items()) for method, points in methods.items()}
        for dataset, methods in grouped.items()
    }


def plot(grouped):
    """One panel per dataset; returns the figure."""
    fig, axes = plt.subplots(1, len(grouped), figsize=(6.5 * len(grouped), 7.0), squeeze=False)
    for ax, (dataset, methods) in zip(axes[0], grouped.items()):
        ax.set_prop_cycle(color=plt.get_cmap("tab20").colors)  # 20 colours: a panel has up to 13 methods
        n_references = 0
        for method, points in methods.items():
            private = sorted((eps, acc) for eps, acc in points if eps is not None)
            if private:
                eps = [p[0] for p in private]
                ax.errorbar(
                    eps, [np.mean(p[1]) for p in private], yerr=[np.std(p[1]) for p in private],
                    marker="o", capsize=3, label=method, linestyle="-" if method.startswith("skpate") else "--",
                )  # fmt: skip
            for _, accuracies in (p for p in points if p[0] is None):
                ax.axhline(np.mean(accuracies), linestyle="--", linewidth=1, color="grey")
                # x in axes coordinates, y in data; labels alternate ends so that close lines stay readable.
                left = n_references % 2 == 0
                ax.text(0.01 if left else 0.99, np.mean(accuracies), method, transform=ax.get_yaxis_transform(),
                        fontsize=7, color="grey", va="bottom", ha="left" if left else "right")  # fmt: skip
                n_references += 1
        ax.set_xscale("log")
        # One tick per budget: a bound a little under its budget (e.g. 0.4995) shares the budget's tick.
        ticks = sorted({float(f"{eps:.1g}") for points in methods.values() for eps, _ in points if eps is not None})
        ax.set_xticks(ticks, [f"{eps:.3g}" for eps in ticks], minor=False)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("publishable epsilon (delta = 1e-5)")
        ax.set_ylabel("accuracy on the evaluation half")
        ax.set_title(dataset)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1)  # below: lines stay visible
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="JSON files written by the benchmarks' --json")
    parser.add_argument("-o", "--output", default="docs/images/privacy_utility.png")
    args = parser.parse_args()
    plot(load(args.results)).savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
