"""Teachers on a cluster through joblib's backend mechanism: dask.distributed, worker processes on loopback."""

import joblib
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from skpate import GNMax, PATEClassifier

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        yield client


def test_teachers_are_fit_and_vote_on_the_dask_workers(client):
    X, y = make_classification(n_samples=2000, n_features=8, random_state=0)
    params = dict(
        n_teachers=40,
        aggregator=GNMax(sigma=4.0),
        n_rounds=2,
        max_queries=200,
        epsilon=None,
        classes=[0, 1],
        random_state=0,
    )
    pate = PATEClassifier(DecisionTreeClassifier(max_depth=4), **params)
    with distributed.get_task_stream(client) as stream, joblib.parallel_backend("dask"):
        pate.fit(X[:1600], y[:1600], X_public=X[1600:])
    fit_tasks = [task for task in stream.data if "_fit_and_vote" in task["key"]]
    vote_tasks = [task for task in stream.data if "_vote" in task["key"] and "_fit_and_vote" not in task["key"]]
    assert len({task["worker"] for task in fit_tasks}) == 2  # spread over both worker processes
    assert vote_tasks  # the second round's votes too
    assert len(fit_tasks) + len(vote_tasks) == len(stream.data)  # nothing else on the cluster
    # Same result as on one machine: the backend changes where, not what.
    local = PATEClassifier(DecisionTreeClassifier(max_depth=4), **params).fit(X[:1600], y[:1600], X_public=X[1600:])
    np.testing.assert_array_equal(pate.public_labels_, local.public_labels_)
    assert pate.privacy_report_.epsilon == local.privacy_report_.epsilon


def test_a_teachers_own_parallelism_stays_on_its_worker(client):
    # A forest's trees are joblib tasks too: under the dask backend they would
    # otherwise be sent to the cluster one by one, from inside a teacher task.
    X, y = make_classification(n_samples=1000, n_features=8, random_state=0)
    pate = PATEClassifier(
        RandomForestClassifier(n_estimators=4), n_teachers=10, aggregator=GNMax(sigma=4.0), max_queries=100,
        epsilon=None, classes=[0, 1], student=DecisionTreeClassifier(), random_state=0,
    )  # fmt: skip
    with distributed.get_task_stream(client) as stream, joblib.parallel_backend("dask"):
        pate.fit(X[:800], y[:800], X_public=X[800:])
    keys = [task["key"] for task in stream.data]
    assert keys and all("_fit_and_vote" in key for key in keys), keys


def test_ray_joblib_backend_gives_the_same_fit(capsys):
    ray = pytest.importorskip("ray")
    from ray.util.joblib import register_ray

    X, y = make_classification(n_samples=2000, n_features=8, random_state=0)
    params = dict(
        n_teachers=40,
        aggregator=GNMax(sigma=4.0),
        n_rounds=2,
        max_queries=200,
        epsilon=None,
        classes=[0, 1],
        random_state=0,
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        register_ray()
        with joblib.parallel_backend("ray"):
            # verbose=2 asks for progress; Ray's backend cannot stream results, so it falls back.
            pate = PATEClassifier(DecisionTreeClassifier(max_depth=4), verbose=2, **params)
            pate.fit(X[:1600], y[:1600], X_public=X[1600:])
    finally:
        ray.shutdown()
    local = PATEClassifier(DecisionTreeClassifier(max_depth=4), **params).fit(X[:1600], y[:1600], X_public=X[1600:])
    np.testing.assert_array_equal(pate.public_labels_, local.public_labels_)
    assert "teachers 40/40" in capsys.readouterr().err
