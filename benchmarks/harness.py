"""The benchmarks' shared parts: data, the seed x epsilon loop, the result records and their tables.

Every experiment writes one JSON object per line (a *record*, :data:`FIELDS`)
to ``benchmarks/results/<experiment>.jsonl``: one fitted model, scored once.
Tables and the figure are computed from records only, so a finished run can
be re-tabulated or redrawn without refitting anything.

This module imports no optional dependency (torch, Opacus, kymatio,
matplotlib): those are imported inside the functions that need them.
"""

import json
import math
import os
import pathlib
import time
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

#: The keys of a record, in this order. ``epsilon`` is the budget the method was given (``None``: non-private);
#: ``publishable_epsilon`` what its fit says may be published (``privacy_spent_[0]``; ``None``: non-private);
#: ``details`` (optional, a dict) holds experiment-specific numbers such as the number of queries.
FIELDS = ("benchmark", "method", "epsilon", "delta", "seed", "accuracy", "publishable_epsilon", "seconds")

#: delta of every benchmark (the papers' value for UCI Adult; the same for Fashion-MNIST).
DELTA = 1e-5

#: The public label sets: the datasets' documentation, never read from the private labels.
ADULT_CLASSES = ["<=50K", ">50K"]
FASHION_CLASSES = list(range(10))

#: Where the records go by default.
RESULTS = pathlib.Path(__file__).resolve().parent / "results"

#: Cache of the Fashion-MNIST scattering features (a few minutes to compute once).
SCATTERING_CACHE = pathlib.Path(os.environ.get("SKPATE_SCATTERING_CACHE", "/tmp/fmnist_scattering.npy"))


# ---------------------------------------------------------------------------------------------------- data


def adult():
    """UCI Adult in the papers' split (:func:`skpate.datasets.adult_papers_split`).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_private, y_private`` (``adult.data``), ``X_public`` (the first half of
        ``adult.test``, features only for the learners), ``X_eval, y_eval`` (its
        second half).
    """
    from skpate.datasets import adult_papers_split

    return adult_papers_split()


def fashion_pixels():
    """Fashion-MNIST as flat rows scaled to [0, 1] by the constant 255 (free), in the benchmarks' split.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_private, y_private`` (the 60,000 training images), ``X_public, y_public``
        (the first 5,000 test images), ``X_eval, y_eval`` (the last 5,000).
    """
    from skpate.datasets import load_fashion_mnist

    X_train, y_train, X_test, y_test = load_fashion_mnist()

    def flat(images):
        return (images.reshape(len(images), -1) / 255.0).astype(np.float32)

    return _split(flat(X_train), y_train, flat(X_test), y_test)


def fashion_scattering():
    """Fashion-MNIST as wavelet scattering features, in the split of :func:`fashion_pixels`.

    Every image is mapped to ``log(1e-6 + |S|)`` of kymatio's ``Scattering2D(J=2, L=8)``
    (3,969 features): a fixed, data-independent transform, so it costs no privacy.
    The features are cached in :data:`SCATTERING_CACHE` (environment variable
    ``SKPATE_SCATTERING_CACHE``). Needs kymatio (the ``bench`` extra).

    Returns
    -------
    data : sklearn.utils.Bunch
        As :func:`fashion_pixels`, with features instead of pixels.
    """
    from skpate.datasets import load_fashion_mnist

    X_train, y_train, X_test, y_test = load_fashion_mnist()
    if SCATTERING_CACHE.exists():
        features = np.load(SCATTERING_CACHE)
    else:
        start = time.perf_counter()
        features = _scattering(np.concatenate([X_train, X_test]).reshape(-1, 28, 28))
        np.save(SCATTERING_CACHE, features)
        print(f"scattering features {features.shape} computed in {time.perf_counter() - start:.0f}s", flush=True)
    n = len(X_train)
    return _split(features[:n], y_train, features[n:], y_test)


def _split(X_train, y_train, X_test, y_test):
    from sklearn.utils import Bunch

    half = len(X_test) // 2
    return Bunch(
        X_private=X_train, y_private=np.asarray(y_train), X_public=X_test[:half], y_public=np.asarray(y_test[:half]),
        X_eval=X_test[half:], y_eval=np.asarray(y_test[half:]),
    )  # fmt: skip


def _scattering(images, batch_size=500):
    import scipy.special

    if not hasattr(scipy.special, "sph_harm"):
        # kymatio 0.3 imports scipy.special.sph_harm (removed in recent SciPy) for its 3D filters; 2D never calls it.
        def _sph_harm(*args, **kwargs):
            raise NotImplementedError("3D scattering is not used")

        scipy.special.sph_harm = _sph_harm
    import torch
    from kymatio.torch import Scattering2D

    scattering, out = Scattering2D(J=2, shape=(28, 28)), []
    with torch.no_grad():
        for start in range(0, len(images), batch_size):
            batch = torch.from_numpy(images[start : start + batch_size].astype(np.float32) / 255.0)
            out.append(scattering(batch).reshape(len(batch), -1).numpy())
    return np.log(1e-6 + np.abs(np.concatenate(out))).astype(np.float32)


# ---------------------------------------------------------------------------------------------------- records


def make_record(benchmark, method, epsilon, seed, accuracy, publishable_epsilon, seconds, delta=DELTA, details=None):
    """One result record (a dict with the keys :data:`FIELDS`, plus ``details`` if given).

    Parameters
    ----------
    benchmark : str
        ``"adult"`` or ``"fashion_mnist"``: one panel of the figure.
    method : str
        The row label.
    epsilon : float or None
        The budget (``None`` or ``inf``: a non-private reference).
    seed : int
    accuracy : float
        On the benchmark's evaluation rows.
    publishable_epsilon : float or None
        What the fit says may be published (``None`` or ``inf``: non-private).
    seconds : float or None
        Wall time of the fit.
    delta : float, default=DELTA
    details : dict, optional
        Experiment-specific numbers (JSON-serialisable).

    Returns
    -------
    record : dict
    """
    record = dict(
        benchmark=benchmark, method=method, epsilon=_finite(epsilon), delta=float(delta), seed=int(seed),
        accuracy=float(accuracy), publishable_epsilon=_finite(publishable_epsilon),
        seconds=None if seconds is None else round(float(seconds), 2),
    )  # fmt: skip
    if details:
        record["details"] = {key: _finite(value) for key, value in details.items()}
    return record


def _finite(value):
    """``None`` for None / inf / nan (JSON has no infinity), else a float."""
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)


def check_record(record):
    """Raise ``ValueError`` unless ``record`` has exactly :data:`FIELDS` (and optionally ``details``)."""
    keys = set(record) - {"details"}
    if keys != set(FIELDS):
        raise ValueError(f"a record has the keys {FIELDS}, got {sorted(record)}")
    return record


class RecordFile:
    """Append records to a JSON-lines file as they are measured (a stopped run keeps what it measured).

    Parameters
    ----------
    path : path-like
        Truncated when opened.
    """

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")
        self.records = []

    def __call__(self, record):
        self.records.append(check_record(record))
        with self.path.open("a") as handle:
            handle.write(json.dumps(record) + "\n")


def read_records(*paths):
    """The records of JSON-lines files, in file order.

    Parameters
    ----------
    *paths : path-like

    Returns
    -------
    records : list of dict
    """
    records = []
    for path in paths:
        with open(path) as handle:
            records += [check_record(json.loads(line)) for line in handle if line.strip()]
    return records


# ---------------------------------------------------------------------------------------------------- the loop


def seed_epsilon_loop(benchmark, methods, data, seeds, epsilons, sink, delta=DELTA, log=print):
    """Fit and score every method at every (seed, epsilon); one record each, passed to ``sink``.

    Parameters
    ----------
    benchmark : str
    methods : dict
        ``{method: factory(seed, epsilon) -> estimator}``; the estimator has
        ``fit(X, y, X_public=...)``, ``score`` and ``privacy_spent_``. A
        :class:`WarmStarted` factory reuses one estimator across the budgets
        of a seed.
    data : sklearn.utils.Bunch
        ``X_private, y_private, X_public, X_eval, y_eval``.
    seeds : iterable of int
    epsilons : sequence of float
    sink : callable
        Called with each record (e.g. a :class:`RecordFile`).
    delta : float, default=DELTA
    log : callable or None, default=print
        Called with one progress line per fit.

    Returns
    -------
    records : list of dict
    """
    from skpate import SeededNoiseWarning

    records, start = [], time.perf_counter()
    for seed in seeds:
        for epsilon in epsilons:
            for method, factory in methods.items():
                model, fit_start = factory(seed, epsilon), time.perf_counter()
                with warnings.catch_warnings():  # seeded noise on purpose: a benchmark must be reproducible
                    warnings.filterwarnings("ignore", category=SeededNoiseWarning)
                    model.fit(data.X_private, data.y_private, X_public=data.X_public)
                seconds = time.perf_counter() - fit_start
                record = make_record(
                    benchmark, method, epsilon, seed, model.score(data.X_eval, data.y_eval), model.privacy_spent_[0],
                    seconds, delta=delta,
                )  # fmt: skip
                sink(record)
                records.append(record)
                if log is not None:
                    spent, total = _finite(record["publishable_epsilon"]), time.perf_counter() - start
                    log(
                        f"seed {seed} eps {epsilon:g} {method:40s} publishable eps "
                        f"{spent if spent is None else round(spent, 4)}"
                        f" accuracy {record['accuracy']:.4f} ({seconds:.0f}s; {total:.0f}s)"
                    )
    return records


class WarmStarted:
    """A factory that builds one estimator per seed and reuses it at the seed's later budgets.

    The first call for a seed builds the estimator; later calls for the same
    seed return it after ``set_params(epsilon=epsilon)``, so an estimator with
    ``warm_start=True`` trains its teachers once per seed.

    Parameters
    ----------
    build : callable
        ``build(seed, epsilon) -> estimator``.
    """

    def __init__(self, build):
        self.build = build
        self._seed, self._model = None, None

    def __call__(self, seed, epsilon):
        if self._model is None or seed != self._seed:
            self._seed, self._model = seed, self.build(seed, epsilon)
        else:
            self._model.set_params(epsilon=epsilon)
        return self._model


# ---------------------------------------------------------------------------------------------------- tables


def accuracies(records):
    """``{(method, epsilon): {seed: accuracy}}`` in the order the methods first appear."""
    table = {}
    for record in records:
        table.setdefault((record["method"], record["epsilon"]), {})[record["seed"]] = record["accuracy"]
    return table


def paired_difference(records, minuend, subtrahend):
    """Per epsilon, the mean and standard error of ``minuend - subtrahend`` over the seeds both have.

    Parameters
    ----------
    records : list of dict
    minuend, subtrahend : str
        Two methods run on the same seeds (e.g. the same teachers).

    Returns
    -------
    differences : dict
        ``{epsilon: (mean, standard error, number of seeds)}``; the standard
        error (``std(ddof=1) / sqrt(n)``) is nan for one seed.
    """
    table, out = accuracies(records), {}
    for (method, epsilon), by_seed in table.items():
        other = table.get((subtrahend, epsilon))
        if method != minuend or other is None:
            continue
        gaps = np.array([by_seed[seed] - other[seed] for seed in sorted(set(by_seed) & set(other))])
        if gaps.size:
            se = gaps.std(ddof=1) / np.sqrt(gaps.size) if gaps.size > 1 else np.nan
            out[epsilon] = (float(gaps.mean()), float(se), int(gaps.size))
    return out


def format_table(records, differences=()):
    """Mean +- std (over seeds) of the accuracy, one row per method, one column per epsilon.

    Parameters
    ----------
    records : list of dict
    differences : sequence of (minuend, subtrahend) or (minuend, subtrahend, label), default=()
        Methods whose paired difference (:func:`paired_difference`) gets a row, as mean +- standard error.

    Returns
    -------
    table : str
        Non-private references (epsilon ``None``) get the column ``non-private``.
    """
    table = accuracies(records)
    private = sorted({eps for _, eps in table if eps is not None})
    epsilons = private + ([None] if any(eps is None for _, eps in table) else [])
    rows = []
    for method in dict.fromkeys(method for method, _ in table):
        cells = []
        for eps in epsilons:
            values = np.array(list(table.get((method, eps), {}).values()))
            cells.append(f"{values.mean():.4f} +- {values.std():.4f}" if values.size else "")
        rows.append((method, cells))
    for minuend, subtrahend, *label in differences:
        gaps = paired_difference(records, minuend, subtrahend)
        label = f"{label[0] if label else f'{minuend} minus {subtrahend}'} (paired by seed, +- s.e.)"
        rows.append((label, [_difference_cell(gaps.get(eps)) for eps in epsilons]))
    width = max([len("method")] + [len(label) for label, _ in rows]) + 2
    names = ["non-private" if eps is None else f"eps {eps:g}" for eps in epsilons]
    lines = [f"{'method':{width}s}" + "".join(f"{name:>19s}" for name in names)]
    lines.append("-" * len(lines[0]))
    lines += [f"{label:{width}s}" + "".join(f"{cell:>19s}" for cell in cells) for label, cells in rows]
    n_seeds = sorted({len(by_seed) for by_seed in table.values()})
    lines.append(f"accuracy on the evaluation rows, mean +- std over {'/'.join(map(str, n_seeds))} seed(s)")
    return "\n".join(lines)


def _difference_cell(gap):
    if gap is None:
        return ""
    mean, se, _ = gap
    return f"{mean:+.4f} +- {se:.4f}" if np.isfinite(se) else f"{mean:+.4f} (1 seed)"


# ---------------------------------------------------------------------------------------------------- experiments


@dataclass(frozen=True)
class Experiment:
    """One experiment the command line runs: its defaults, what ``--quick`` changes, and how to run it.

    Parameters
    ----------
    name : str
        The command-line name; records go to ``<name>.jsonl``.
    benchmark : str
        ``"adult"`` or ``"fashion_mnist"``.
    summary : str
        One line for ``python -m benchmarks list``.
    seeds : int
        Seeds 0 .. seeds - 1 in the full run.
    epsilons : tuple of float
        Budgets of the full run.
    quick_seeds : int
    quick_epsilons : tuple of float
    quick_note : str
        What ``--quick`` changes besides seeds and budgets ("" if nothing).
    methods : callable
        ``methods(n_jobs, peers) -> {method: factory(seed, epsilon)}`` for :func:`seed_epsilon_loop`.
    data : callable
        Returns the data Bunch.
    differences : tuple, default=()
        Paired differences the table prints: (minuend, subtrahend[, label]) (see :func:`format_table`).
    """

    name: str
    benchmark: str
    summary: str
    seeds: int
    epsilons: tuple
    quick_seeds: int
    quick_epsilons: tuple
    quick_note: str
    methods: Callable
    data: Callable
    differences: tuple = ()

    def run(self, seeds, epsilons, sink, n_jobs=2, peers=True, log=print):
        """Run :func:`seed_epsilon_loop` on this experiment's data and methods; returns the records."""
        return seed_epsilon_loop(self.benchmark, self.methods(n_jobs, peers), self.data(), seeds, epsilons, sink,
                                 log=log)  # fmt: skip
