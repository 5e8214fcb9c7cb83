"""The privacy-utility figure: accuracy against publishable epsilon, one panel per benchmark, from records.

matplotlib is imported when a figure is drawn, not when this module is imported.
"""

from .harness import RESULTS, read_records

#: The record files the figure is drawn from, in this order: where two hold the same method at the same
#: epsilon, the later file's point is drawn (the headline run redraws its own methods).
SOURCES = ("adult_pate.jsonl", "adult_headline.jsonl", "fashion_scattering.jsonl", "fashion_cells.jsonl",
           "fashion_linear.jsonl")  # fmt: skip

#: Panel titles.
TITLES = {"adult": "UCI Adult", "fashion_mnist": "Fashion-MNIST"}


def points(records):
    """``{benchmark: {method: {epsilon: [accuracy of each seed]}}}`` of one record set.

    Parameters
    ----------
    records : list of dict

    Returns
    -------
    grouped : dict
    """
    grouped = {}
    for record in records:
        by_epsilon = grouped.setdefault(record["benchmark"], {}).setdefault(record["method"], {})
        by_epsilon.setdefault(record["epsilon"], []).append(record["accuracy"])
    return grouped


def load(paths):
    """The records of ``paths`` grouped by :func:`points`, a later file's group replacing an earlier one's.

    Parameters
    ----------
    paths : list of path-like

    Returns
    -------
    grouped : dict
    """
    grouped = {}
    for path in paths:
        for benchmark, methods in points(read_records(path)).items():
            for method, by_epsilon in methods.items():
                grouped.setdefault(benchmark, {}).setdefault(method, {}).update(by_epsilon)
    return grouped


def plot(grouped):
    """One panel per benchmark: mean accuracy, the seeds' std as error bars, publishable epsilon on a log axis.

    Parameters
    ----------
    grouped : dict
        From :func:`load`. Non-private references (epsilon ``None``) are dashed horizontal lines;
        peers (methods not starting with ``skpate``) dashed curves.

    Returns
    -------
    figure : matplotlib.figure.Figure
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    import numpy as np

    fig, axes = plt.subplots(1, len(grouped), figsize=(6.5 * len(grouped), 7.0), squeeze=False)
    for ax, (benchmark, methods) in zip(axes[0], grouped.items()):
        ax.set_prop_cycle(color=plt.get_cmap("tab20").colors)  # 20 colours: a panel has up to 13 methods
        n_references = 0
        for method, by_epsilon in methods.items():
            private = sorted((eps, acc) for eps, acc in by_epsilon.items() if eps is not None)
            if private:
                ax.errorbar(
                    [eps for eps, _ in private], [np.mean(acc) for _, acc in private],
                    yerr=[np.std(acc) for _, acc in private], marker="o", capsize=3, label=method,
                    linestyle="-" if method.startswith("skpate") else "--",
                )  # fmt: skip
            if None in by_epsilon:
                mean, left = np.mean(by_epsilon[None]), n_references % 2 == 0
                ax.axhline(mean, linestyle="--", linewidth=1, color="grey")
                # x in axes coordinates, y in data; labels alternate ends so that close lines stay readable.
                ax.text(0.01 if left else 0.99, mean, method, transform=ax.get_yaxis_transform(), fontsize=7,
                        color="grey", va="bottom", ha="left" if left else "right")  # fmt: skip
                n_references += 1
        ax.set_xscale("log")
        ticks = sorted({float(f"{eps:.1g}") for by_eps in methods.values() for eps in by_eps if eps is not None})
        ax.set_xticks(ticks, [f"{eps:.3g}" for eps in ticks], minor=False)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("publishable epsilon (delta = 1e-5)")
        ax.set_ylabel("accuracy on the evaluation rows")
        ax.set_title(TITLES.get(benchmark, benchmark))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1)  # below: lines stay visible
    fig.tight_layout()
    return fig


def draw(output, results=RESULTS, replace=None):
    """Draw the figure from the record files :data:`SOURCES` in ``results`` and save it to ``output``.

    Parameters
    ----------
    output : path-like
    results : path-like, default=RESULTS
    replace : dict, optional
        ``{source name: path}``: read this file instead of that source (e.g. a quick run's headline records).

    Returns
    -------
    paths : list of pathlib.Path
        The record files drawn (sources missing from ``results`` are skipped).
    """
    import pathlib

    replace = replace or {}
    paths = [pathlib.Path(replace.get(name, pathlib.Path(results) / name)) for name in SOURCES]
    paths = [path for path in paths if path.exists()]
    return draw_records(output, paths)


def draw_records(output, paths):
    """Draw the records of ``paths`` (one panel per benchmark) and save the figure to ``output``; returns ``paths``."""
    import pathlib

    import matplotlib.pyplot as plt

    fig = plot(load(paths))
    pathlib.Path(output).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=120)
    plt.close(fig)
    return paths
