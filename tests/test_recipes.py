"""The tabular recipe: what it configures, and that a fit with it stays within its budget."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.preprocessing import StandardScaler

from skpate import GNMax, make_tabular_pate


def test_recipe_configures_the_measured_settings():
    pate = make_tabular_pate(StandardScaler(), epsilon=1.0, classes=[0, 1], n_teachers=40, random_state=3)
    params = pate.get_params()
    assert (params["epsilon"], params["n_teachers"], params["random_state"]) == (1.0, 40, 3)
    assert (params["query_strategy"], params["n_rounds"], params["aggregator__sigma"]) == ("uncertainty", 5, 40 / 1.75)
    teacher, student = params["estimator"][-1], params["student"][-1]
    assert isinstance(teacher, RandomForestClassifier) and teacher.max_features is None
    assert isinstance(student, RandomForestClassifier) and student.min_samples_leaf == 5
    # Each pipeline has its own preprocessor: nothing fitted is shared between teachers and student.
    assert params["estimator"][0] is not params["student"][0]
    assert make_tabular_pate(epsilon=1.0, classes=[0, 1], n_rounds=1).query_strategy == "random"


def test_recipe_fit_spends_at_most_its_budget_and_learns():
    X, y = make_classification(n_samples=3000, n_features=8, n_informative=5, random_state=0)
    X_priv, y_priv, X_pub, X_eval, y_eval = X[:2000], y[:2000], X[2000:2600], X[2600:], y[2600:]
    pate = make_tabular_pate(epsilon=2.0, classes=[0, 1], n_teachers=20, n_rounds=3, random_state=0)
    pate.fit(X_priv, y_priv, X_public=X_pub)
    assert pate.privacy_spent_[0] <= 2.0 and pate.privacy_report_.guarantee == "a-priori"
    assert isinstance(pate.aggregator_, GNMax) and pate.aggregator_.sigma == pytest.approx(20 / 1.75)
    assert 0 < pate.n_queries_ <= len(X_pub)
    majority = max(np.mean(y_eval), 1 - np.mean(y_eval))
    assert pate.score(X_eval, y_eval) > majority + 0.1
