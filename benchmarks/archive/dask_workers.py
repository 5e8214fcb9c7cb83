"""Teacher fitting on a dask.distributed cluster: 1 worker vs 2 workers (local processes, loopback).

250 random-forest teachers on UCI Adult, fitted and voting through
``joblib.parallel_backend("dask")``; the same seed gives the same labels on
any cluster size. With one worker, joblib runs the single batch in the client
process (``n_jobs=1`` is sequential in joblib): a one-core baseline. On a
real cluster, pass the scheduler's address instead of a ``LocalCluster``.

Run: ``python benchmarks/dask_workers.py`` (under a minute on 2 cores).
"""

import time

import joblib
import numpy as np
from adult import CLASSES  # benchmarks/adult.py, next to this script: the public label set
from distributed import Client, LocalCluster
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

from skpate import GNMax, PATEClassifier
from skpate.datasets import adult_encoder, adult_papers_split


def main():
    data = adult_papers_split()
    forest = make_pipeline(adult_encoder(), RandomForestClassifier(n_estimators=50, max_features=None, random_state=0))
    labels, seconds = {}, {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None) as cluster, Client(cluster):  # fmt: skip
            pate = PATEClassifier(forest, n_teachers=250, aggregator=GNMax(sigma=40.0), max_queries=500,
                                  classes=CLASSES, sanitize_order=None, random_state=0)  # fmt: skip
            start = time.perf_counter()
            with joblib.parallel_backend("dask"):
                pate.fit(data.X_private, data.y_private, X_public=data.X_public)
            seconds[workers] = time.perf_counter() - start
            labels[workers] = pate.public_labels_
    print("250 random-forest teachers on UCI Adult, fit + votes on 500 queries, dask.distributed LocalCluster")
    for workers in (1, 2):
        print(f"  {workers} worker{'s' if workers > 1 else ''} x 1 thread: {seconds[workers]:6.1f}s")
    print(f"  speed-up: {seconds[1] / seconds[2]:.2f}x; same labels: {np.array_equal(labels[1], labels[2])}")


if __name__ == "__main__":
    main()
