"""The tabular suite: PrivateClassifier against DP-SGD peers and non-private references on tables it never saw.

Protocol (issue 29): for every dataset of :data:`benchmarks.tabular_data.SUITE`
(or ``HOLDOUT``) and seed, a random split (seeded) into 70% private rows, 15%
public pool (features only) and 15% evaluation rows; delta 1e-5; publishable
epsilon 0.5, 1, 4. Every method sees the same split:

* ``skpate PrivateClassifier``: defaults only (``classes`` from the dataset's
  documentation, ``random_state`` the seed);
* ``skpate NoisyBoostingClassifier``: defaults only, likewise (issue 31;
  docs/benchmarks/boosting.md);
* Opacus DP-SGD logistic regression and a 64-unit tanh MLP on the same
  public-row features (:class:`skpate.preprocessing.PublicPreprocessor`),
  calibrated for replacing one record (skpate's guarantee), at the settings
  of the Adult peers (:data:`benchmarks.peers.ADULT_DPSGD`, chosen on Adult,
  which is not in the suite); logistic regression also for adding or removing
  one (Opacus's relation, a weaker guarantee at the same epsilon);
* non-private references on the private rows: logistic regression, random
  forest, HistGradientBoosting.

No setting of any method was chosen on a suite dataset. Records go to
``benchmarks/results/tabular_suite.jsonl`` (``tabular_holdout.jsonl``), one
per fit, with ``benchmark`` the dataset's name and ``seconds`` the fit time.
"""

import time

import numpy as np

from .harness import DELTA, make_record, seed_epsilon_loop
from .peers import ADULT_DPSGD, ADULT_LR, _Peer, train_dpsgd

PRIVATE_CLASSIFIER = "skpate PrivateClassifier"
BOOSTING = "skpate NoisyBoostingClassifier"
DPSGD_LOGISTIC = "Opacus DP-SGD logistic (replace-one)"
DPSGD_MLP = "Opacus DP-SGD MLP (replace-one)"
DPSGD_LOGISTIC_ADD_REMOVE = "Opacus DP-SGD logistic (add-remove)"
#: The peers the criterion compares with (same guarantee as skpate's).
PEERS = (DPSGD_LOGISTIC, DPSGD_MLP)
EPSILONS = (0.5, 1.0, 4.0)
SEEDS = 3


class TabularDPSGD(_Peer):
    """Opacus DP-SGD of a softmax regression or a tanh MLP on public-row features of any table.

    Parameters
    ----------
    classes : list
        The public label set.
    epsilon : float, default=1.0
    delta : float, default=DELTA
    neighboring : {"replace-one", "add-remove"}, default="replace-one"
    hidden : int or None, default=None
        None: a linear layer; else a tanh MLP with this many hidden units.
    random_state : int, default=0
    """

    def __init__(self, classes, epsilon=1.0, delta=DELTA, neighboring="replace-one", hidden=None, random_state=0):
        self.classes = classes
        self.epsilon = epsilon
        self.delta = delta
        self.neighboring = neighboring
        self.hidden = hidden
        self.random_state = random_state

    def fit(self, X, y, X_public=None):
        """Train on the private rows; the features are fitted on ``X_public`` (free)."""
        import torch

        from skpate.preprocessing import PublicPreprocessor

        self.preprocessor_ = PublicPreprocessor().fit(X_public)
        features = torch.from_numpy(self.preprocessor_.transform(X).astype(np.float32))
        self.classes_ = np.sort(np.asarray(self.classes))  # searchsorted needs them sorted
        labels = torch.from_numpy(np.searchsorted(self.classes_, np.asarray(y)).astype(np.int64))
        n_features, n_classes, hidden = features.shape[1], len(self.classes), self.hidden

        def module():
            if hidden is None:
                return torch.nn.Linear(n_features, n_classes)
            return torch.nn.Sequential(
                torch.nn.Linear(n_features, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, n_classes)
            )

        lr = ADULT_LR["logistic" if hidden is None else "mlp"]
        self.module_, spent, noise = train_dpsgd(
            module, features, labels, torch.nn.CrossEntropyLoss(), self.epsilon, self.delta, self.random_state,
            neighboring=self.neighboring, **{**ADULT_DPSGD, "lr": lr},
        )  # fmt: skip
        return self._fitted(spent, noise)

    def predict(self, X):
        """The class of highest score."""
        import torch

        with torch.no_grad():
            scores = self.module_(torch.from_numpy(self.preprocessor_.transform(X).astype(np.float32))).numpy()
        return self.classes_[scores.argmax(axis=1)]


def private_methods(classes, peers=True):
    """``{method: factory(seed, epsilon)}`` of the private methods on a dataset with label set ``classes``."""
    from skpate import NoisyBoostingClassifier, PrivateClassifier

    methods = {
        PRIVATE_CLASSIFIER: lambda seed, epsilon: PrivateClassifier(
            epsilon=epsilon, classes=classes, random_state=seed
        ),
        BOOSTING: lambda seed, epsilon: NoisyBoostingClassifier(epsilon=epsilon, classes=classes, random_state=seed),
    }
    if peers:
        methods[DPSGD_LOGISTIC] = lambda seed, epsilon: TabularDPSGD(classes, epsilon, random_state=seed)
        methods[DPSGD_MLP] = lambda seed, epsilon: TabularDPSGD(classes, epsilon, hidden=64, random_state=seed)
        methods[DPSGD_LOGISTIC_ADD_REMOVE] = lambda seed, epsilon: TabularDPSGD(
            classes, epsilon, neighboring="add-remove", random_state=seed
        )
    return methods


def reference_models():
    """The non-private references, fitted on the private rows' public-row features: ``{name: estimator}``."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    return {
        "non-private logistic regression": LogisticRegression(max_iter=2000),
        "non-private random forest": RandomForestClassifier(n_jobs=2),
        "non-private HistGradientBoosting": HistGradientBoostingClassifier(),
    }


def run(names, seeds, epsilons, sink, peers=True, log=print, methods=None):
    """Every dataset, seed, method and budget; one record each to ``sink``; returns the records.

    ``methods`` (a collection of method names, private or reference), if given, runs only those.
    """
    from sklearn.base import clone

    from skpate.preprocessing import PublicPreprocessor

    from . import tabular_data

    records = []
    for name in names:
        data = tabular_data.load(name)
        for seed in seeds:
            split = tabular_data.split(data, seed)
            private = {m: f for m, f in private_methods(data.classes, peers).items() if _chosen(m, methods)}
            records += seed_epsilon_loop(name, private, split, [seed], epsilons, sink, log=log)
            references = {m: model for m, model in reference_models().items() if _chosen(m, methods)}
            if references:
                pre = PublicPreprocessor().fit(split.X_public)
                Z, Z_eval = pre.transform(split.X_private), pre.transform(split.X_eval)
            for method, model in references.items():
                start = time.perf_counter()
                model = clone(model).set_params(random_state=seed) if "random_state" in model.get_params() else model
                model.fit(Z, split.y_private)
                seconds = time.perf_counter() - start
                record = make_record(name, method, None, seed, model.score(Z_eval, split.y_eval), None, seconds)
                sink(record)
                records.append(record)
                if log is not None:
                    log(f"{name} seed {seed} {method:40s} accuracy {record['accuracy']:.4f} ({seconds:.0f}s)")
    return records


def _chosen(method, methods):
    return methods is None or method in methods


def summary(records, peers=PEERS, method=PRIVATE_CLASSIFIER):
    """Per dataset and epsilon: ``method`` (PrivateClassifier), the best peer, HistGradientBoosting, the gap closed.

    Returns
    -------
    rows : list of dict
        ``dataset, epsilon, skpate, skpate_se, peer, peer_name, peer_se, hgb, gap_closed, skpate_seconds,
        peer_seconds``; accuracies are means over seeds, ``gap_closed`` is ``(skpate - peer) / (hgb - peer)``.
    """
    by = {}
    for r in records:
        by.setdefault((r["benchmark"], r["method"], r["epsilon"]), []).append(r)
    rows = []
    for dataset in dict.fromkeys(r["benchmark"] for r in records):
        hgb = np.mean(
            [r["accuracy"] for r in by.get((dataset, "non-private HistGradientBoosting", None), [])] or [np.nan]
        )
        for epsilon in sorted({r["epsilon"] for r in records if r["benchmark"] == dataset and r["epsilon"]}):
            mine = by.get((dataset, method, epsilon), [])
            if not mine:
                continue
            stats = {m: by[(dataset, m, epsilon)] for m in peers if (dataset, m, epsilon) in by}
            best = max(stats, key=lambda m: np.mean([r["accuracy"] for r in stats[m]]), default=None)
            acc = np.array([r["accuracy"] for r in mine])
            peer = np.array([r["accuracy"] for r in stats[best]]) if best else np.array([np.nan])
            rows.append(dict(
                dataset=dataset, epsilon=epsilon, skpate=acc.mean(), skpate_se=_se(acc), peer=peer.mean(),
                peer_name=best, peer_se=_se(peer), hgb=hgb, gap_closed=(acc.mean() - peer.mean()) / (hgb - peer.mean()),
                skpate_seconds=np.mean([r["seconds"] for r in mine]),
                peer_seconds=np.mean([r["seconds"] for r in stats[best]]) if best else np.nan,
            ))  # fmt: skip
    return rows


def _se(values):
    return float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("nan")


def format_summary(rows, name="PrivateClassifier"):
    """The suite's table in Markdown (the docs page's); ``name`` heads the column of :func:`summary`'s method."""
    lines = [
        f"| dataset | eps | {name} | best DP-SGD peer (replace-one) | non-private HGB | gap closed | "
        "fit s (skpate / peer) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        peer = r["peer_name"].replace("Opacus DP-SGD ", "").replace(" (replace-one)", "") if r["peer_name"] else "-"
        lines.append(
            f"| {r['dataset']} | {r['epsilon']:g} | {r['skpate']:.4f} +- {r['skpate_se']:.4f} | {r['peer']:.4f} +- "
            f"{r['peer_se']:.4f} ({peer}) | {r['hgb']:.4f} | {r['gap_closed']:+.2f} | {r['skpate_seconds']:.1f} / "
            f"{r['peer_seconds']:.1f} |"
        )
    return "\n".join(lines)
