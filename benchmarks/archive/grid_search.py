"""A 10-candidate grid search over the noise on UCI Adult, with teachers cached by ``memory``.

Teachers do not depend on the aggregator's noise: with ``memory`` (and an int
``random_state``) ``GridSearchCV`` trains one teacher ensemble per split (plus
the refit), not one per candidate and split. Prints the time of one fit, of
the cached search, and their ratio per teacher ensemble trained (target: at
most 1.5x of one fit's teacher time, measured as the fit minus a fit whose
teachers come from memory). Every one of the 10 x n_splits + 1 fits is
still paid for in privacy (see ``RDPAccountant``).

Run: ``python benchmarks/grid_search.py [--splits 2]`` (under a minute on 2 cores).
"""

import argparse
import tempfile
import time

import numpy as np
import pandas as pd
from adult import CLASSES  # benchmarks/adult.py, next to this script: the public label set
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline

from skpate import GNMax, PATEClassifier
from skpate.datasets import adult_encoder, adult_papers_split


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=2)
    args = parser.parse_args()
    data = adult_papers_split()
    # Private rows labeled, public rows -1: the search's folds mix both, as in a Pipeline.
    X = pd.concat([data.X_private, data.X_public], ignore_index=True)
    y = np.concatenate([data.y_private.astype(object), np.full(len(data.X_public), -1, dtype=object)])
    forest = make_pipeline(adult_encoder(), RandomForestClassifier(n_estimators=50, max_features=None, random_state=0))
    grid = {"aggregator__sigma": np.linspace(20.0, 110.0, 10)}

    def pate(**params):
        return PATEClassifier(forest, n_teachers=250, aggregator=GNMax(), max_queries=500, random_state=0,
                              classes=CLASSES, n_jobs=-1, **params)  # fmt: skip

    start = time.perf_counter()
    pate().fit(X, y)
    single = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as cache:  # holds private teachers: deleted on exit
        start = time.perf_counter()
        # KFold: labels mix strings and the -1 of public rows, which stratification cannot sort.
        search = GridSearchCV(pate(memory=cache), grid, cv=KFold(args.splits, shuffle=True, random_state=0)).fit(X, y)
        search_seconds = time.perf_counter() - start
        # The refit cached the teachers of all rows: a fit that hits costs everything but the teachers.
        start = time.perf_counter()
        pate(memory=cache).set_params(**search.best_params_).fit(X, y)
        hit = time.perf_counter() - start
    teachers = single - hit
    ensembles = args.splits + 1  # one per split, one for the refit
    fits = 10 * args.splits + 1
    print(f"one fit (250 teachers + aggregation + student): {single:.1f}s, of which teachers {teachers:.1f}s "
          f"(the fit minus a fit whose teachers come from memory, {hit:.2f}s)")  # fmt: skip
    print(f"GridSearchCV, 10 candidates x {args.splits} splits + refit = {fits} fits, with memory: "
          f"{search_seconds:.1f}s (without memory: ~{fits * single:.0f}s)")  # fmt: skip
    print(f"per teacher ensemble trained ({ensembles}): {search_seconds / ensembles:.1f}s = "
          f"{search_seconds / ensembles / teachers:.2f}x one fit's teacher time (target <= 1.5x), "
          f"{search_seconds / ensembles / single:.2f}x one whole fit")  # fmt: skip
    print(f"best sigma {search.best_params_['aggregator__sigma']:.0f}, score {search.best_score_:.4f}")


if __name__ == "__main__":
    main()
