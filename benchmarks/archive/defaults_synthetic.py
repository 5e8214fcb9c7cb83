"""Do the budget defaults carry over from UCI Adult? Old and new defaults on synthetic tabular problems.

``PATEClassifier(forest, epsilon=eps)`` with nothing else set, before and after
its budget defaults became the tabular recipe's noise and queries: the old
defaults (GNMax at ``sigma = n_teachers / 3``, random queries in one round)
against the new ones (``GNMax.for_ensemble``: ``n_teachers / (1.75
sqrt(n_classes / 2))``, at most 2,000 answers; 5 rounds of uncertainty
sampling). The problems were not used to choose the defaults:
``make_classification`` with 40,000 rows, 20 features (10 informative), 2
clusters per class, 5% flipped labels; 30,000 private rows for 250 random
forests of 50 trees (120 rows each, the forest is also the student), 5,000
public rows, 5,000 evaluation rows; delta 1e-5. Every epsilon printed is the
budget, publishable.

Run: ``python benchmarks/defaults_synthetic.py [--seeds 2] [--classes 2 5]`` (about 6 minutes on one core).
"""

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from skpate import GNMax, PATEClassifier

BUDGETS = [0.5, 1.0, 2.0, 4.0]
N_TEACHERS = 250
SETTINGS = {
    "old defaults (sigma n/3, random x1)": dict(aggregator=GNMax(N_TEACHERS / 3), query_strategy="random", n_rounds=1),
    "new defaults": dict(aggregator=None, query_strategy="auto", n_rounds="auto"),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 5])
    args = parser.parse_args()
    results = {}
    for n_classes in args.classes:
        X, y = make_classification(
            n_samples=40_000, n_features=20, n_informative=10, n_classes=n_classes, n_clusters_per_class=2,
            flip_y=0.05, random_state=0,
        )  # fmt: skip
        X_private, y_private, X_public, X_eval, y_eval = (
            X[:30_000],
            y[:30_000],
            X[30_000:35_000],
            X[35_000:],
            y[35_000:],
        )
        for seed in range(args.seeds):
            pate = PATEClassifier(
                RandomForestClassifier(n_estimators=50, random_state=seed), n_teachers=N_TEACHERS,
                classes=list(range(n_classes)), random_state=seed, warm_start=True, n_jobs=1,
            )  # fmt: skip
            for epsilon in BUDGETS:
                for name, params in SETTINGS.items():
                    start = time.perf_counter()
                    pate.set_params(epsilon=epsilon, **params).fit(X_private, y_private, X_public=X_public)
                    accuracy = pate.score(X_eval, y_eval)
                    results.setdefault((n_classes, name, epsilon), []).append((accuracy, pate.n_queries_))
                    print(
                        f"{n_classes} classes, seed {seed}, eps {epsilon:g}, {name:36s} sigma "
                        f"{pate.aggregator_.sigma:6.1f} queries {pate.n_queries_:5d} student {accuracy:.4f} "
                        f"({time.perf_counter() - start:.0f}s)",
                        flush=True,
                    )
    print(f"\nmake_classification, {N_TEACHERS} forest teachers, delta 1e-5, mean +- std over {args.seeds} seeds")
    print(f"{'classes':>7s} {'setting':36s}" + "".join(f"{f'eps {e:g}':>18s}" for e in BUDGETS))
    for n_classes in args.classes:
        for name in SETTINGS:
            cells = [np.array(results[n_classes, name, epsilon])[:, 0] for epsilon in BUDGETS]
            print(f"{n_classes:7d} {name:36s}" + "".join(f"{c.mean():11.4f}+-{c.std():.4f}" for c in cells))


if __name__ == "__main__":
    main()
