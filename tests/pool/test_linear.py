"""NoisyGDClassifier: the gradient mechanism's sensitivity and noise, public-only fitting, publishing, errors."""

import pickle

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.datasets import make_classification
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from skpate import NoisyGDClassifier, RDPAccountant
from skpate.pool.linear import clipped_gradient
from skpate.privacy.calibration import COUNT_SHARE, gradient_sigma, private_budget_split
from skpate.privacy.gdp import gdp_epsilon, gdp_mu


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=5000, n_features=10, n_informative=6, n_classes=3, n_clusters_per_class=1, random_state=0
    )
    labels = np.array(["a", "b", "c"], dtype=object)[y]
    return X[:3000], labels[:3000], X[3000:4000], X[4000:], labels[4000:]


def model(**params):
    return NoisyGDClassifier(**{"classes": ["a", "b", "c"], "random_state": 0, **params})


def test_noise_spends_exactly_the_budget():
    # Hand-derived: one replaced row moves the clipped sum by 2 C; T steps at sigma compose to 2 C sqrt(T) / sigma.
    mu = float(gdp_mu(1.0, 1e-5))
    assert gradient_sigma(0.5, 50, mu) == pytest.approx(2 * 0.5 * np.sqrt(50) / mu, rel=1e-12)
    sigma = gradient_sigma(0.5, 50, mu)
    per_step = 2 * 0.5 / sigma
    assert gdp_epsilon(np.sqrt(50 * per_step**2), 1e-5) == pytest.approx(1.0, rel=1e-9)
    # More steps or a larger clip need more noise; a larger budget less.
    assert gradient_sigma(0.5, 100, mu) > sigma and gradient_sigma(1.0, 50, mu) > sigma
    assert gradient_sigma(0.5, 50, float(gdp_mu(3.0, 1e-5))) < sigma


def test_add_remove_halves_the_sensitivity_and_pays_for_the_count():
    mu = float(gdp_mu(1.0, 1e-5))
    assert gradient_sigma(0.5, 50, mu, "add-remove") == pytest.approx(gradient_sigma(0.5, 50, mu) / 2, rel=1e-12)
    assert private_budget_split(mu, "replace-one") == (mu, None)
    steps_mu, count_sigma = private_budget_split(mu, "add-remove")
    # The count (sensitivity 1) and the steps compose to the budget's mu exactly ([DRS22] Cor. 3.3).
    assert steps_mu**2 + (1 / count_sigma) ** 2 == pytest.approx(mu**2, rel=1e-12)
    assert (1 / count_sigma) ** 2 == pytest.approx(COUNT_SHARE * mu**2, rel=1e-12)


def test_add_remove_fit_states_its_noise(data):
    X, y, X_public, X_eval, y_eval = data
    gd = model(epsilon=0.5, n_iter=20, clip=0.25, neighboring="add-remove").fit(X, y, X_public=X_public)
    mu = gdp_mu(0.5, 1e-5)
    assert gd.sigma_ == pytest.approx(0.25 * np.sqrt(20) / (mu * np.sqrt(1 - COUNT_SHARE)))
    assert gd.privacy_spent_ == (0.5, 1e-5)
    assert gd.score(X_eval, y_eval) > 0.8


def test_fit_states_its_noise_and_spends_the_budget(data):
    X, y, X_public, X_eval, y_eval = data
    gd = model(epsilon=0.5, n_iter=20, clip=0.25).fit(X, y, X_public=X_public)
    # The noise is fixed by public quantities only (budget, delta, clip, steps): other private rows, even fewer
    # of them, get the same sigma.
    other = model(epsilon=0.5, n_iter=20, clip=0.25).fit(X[:1000], y[1000:2000], X_public=X_public)
    assert other.sigma_ == gd.sigma_
    # What the released noise spends, derived here and not read from the estimator: each of the 20 steps releases
    # a clipped gradient sum that one replaced row moves by at most 2 * clip, plus N(0, sigma_^2) noise, so the
    # fit is mu-GDP with mu = 2 * clip * sqrt(20) / sigma_ ([DRS22] Cor. 3.3).
    spent = gdp_epsilon(2 * 0.25 * np.sqrt(20) / gd.sigma_, 1e-5)
    assert spent <= 0.5 * (1 + 1e-9)  # within the budget: not too little noise
    assert spent == pytest.approx(0.5, rel=1e-6)  # and all of it: not more noise than the budget calls for
    report = gd.privacy_report_
    assert gd.privacy_spent_ == (report.epsilon, report.delta) == (0.5, 1e-5) and report.guarantee == "budget"
    assert report.spent_epsilon == pytest.approx(spent, rel=1e-6)
    assert f"sigma={gd.sigma_:.4g}" in report.mechanism  # the report names the noise that was released
    assert gd.score(X_eval, y_eval) > 0.8
    assert set(gd.predict(X_eval)) <= {"a", "b", "c"}
    np.testing.assert_allclose(gd.predict_proba(X_eval).sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(gd.predict_log_proba(X_eval)), gd.predict_proba(X_eval))


def test_each_gradient_is_clipped_and_one_replaced_row_moves_the_sum_by_at_most_2_clip():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(200, 6))
    codes = rng.integers(0, 3, size=200)
    W = rng.normal(size=(6, 3))
    clip = 0.3
    for i in range(20):  # one row at a time: its clipped gradient has norm <= clip, attained at W = 0 (residual 0.82)
        assert np.linalg.norm(clipped_gradient(A[i : i + 1], W, codes[i : i + 1], clip)) <= clip + 1e-12
        at_zero = clipped_gradient(A[i : i + 1], np.zeros_like(W), codes[i : i + 1], clip)
        assert np.linalg.norm(at_zero) == pytest.approx(min(clip, np.linalg.norm(A[i]) * np.sqrt(6) / 3))
    total = clipped_gradient(A, W, codes, clip)
    # The worst replacement: at W = 0 every row has the same residual, so the row -a gives the opposite gradient.
    A2 = A.copy()
    A2[0] = -A[0]
    zero = np.zeros_like(W)
    moved = np.linalg.norm(clipped_gradient(A, zero, codes, clip) - clipped_gradient(A2, zero, codes, clip))
    assert moved == pytest.approx(2 * clip)
    # Any replacement moves the sum by at most 2 clip.
    for _ in range(20):
        A3, codes3 = A.copy(), codes.copy()
        A3[7], codes3[7] = 100 * rng.normal(size=6), rng.integers(0, 3)
        assert np.linalg.norm(total - clipped_gradient(A3, W, codes3, clip)) <= 2 * clip + 1e-12


def test_unclipped_gradient_is_the_softmax_cross_entropy_gradient():
    rng = np.random.default_rng(1)
    A, codes, W = rng.normal(size=(50, 4)), rng.integers(0, 3, size=50), rng.normal(size=(4, 3))
    expected = A.T @ (softmax(A @ W, axis=1) - np.eye(3)[codes])
    np.testing.assert_allclose(clipped_gradient(A, W, codes, np.inf), expected, rtol=1e-12)


def test_without_noise_it_approaches_logistic_regression(data):
    X, y, X_public, X_eval, y_eval = data
    gd = model(epsilon=1e6, n_iter=100, clip=10.0).fit(X, y, X_public=X_public)
    assert gd.sigma_ < 0.2  # against gradient sums over 3,000 rows
    reference = LogisticRegression(max_iter=1000).fit(StandardScaler().fit(X_public).transform(X), y)
    reference_score = reference.score(StandardScaler().fit(X_public).transform(X_eval), y_eval)
    assert gd.score(X_eval, y_eval) > reference_score - 0.02
    # At a small budget the noise costs accuracy.
    noisy = model(epsilon=0.05, n_iter=100, clip=10.0).fit(X, y, X_public=X_public)
    assert noisy.score(X_eval, y_eval) < gd.score(X_eval, y_eval)


def test_feature_map_depends_on_public_rows_only_and_the_pickle_holds_no_private_row(data):
    X, y, X_public, _, _ = data
    pre = make_pipeline(StandardScaler(), PCA(5, whiten=True, random_state=0))
    first = model(preprocessor=pre).fit(X, y, X_public=X_public)
    other = model(preprocessor=pre).fit(X[::-1] * 2.0 + 1.0, y, X_public=X_public)  # other private rows
    assert first.radius_ == other.radius_
    np.testing.assert_array_equal(first.preprocessor_[-1].components_, other.preprocessor_[-1].components_)
    assert not np.allclose(first.coef_, other.coef_)
    blob = pickle.dumps(first)
    assert X[0].tobytes() not in blob and X[1].tobytes() not in blob
    assert y[0].encode() not in blob or set(y) <= set(first.classes_)  # labels only as the public label set


def test_seeded_and_reproducible(data):
    X, y, X_public, _, _ = data
    a, b = model(random_state=3).fit(X, y, X_public=X_public), model(random_state=3).fit(X, y, X_public=X_public)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = model(random_state=4).fit(X, y, X_public=X_public)
    assert not np.array_equal(a.coef_, c.coef_)


def test_public_rows_marked_in_y(data):
    X, y, X_public, X_eval, _ = data
    rows = np.vstack([X, X_public])
    labels = np.concatenate([y, np.full(len(X_public), -1, dtype=object)])
    marked = model().fit(rows, labels)
    given = model().fit(X, y, X_public=X_public)
    np.testing.assert_allclose(marked.coef_, given.coef_)


def test_bad_input_is_named(data):
    X, y, X_public, _, _ = data
    with pytest.raises(ValueError, match="not in classes"):
        model(classes=["a", "b"]).fit(X, y, X_public=X_public)
    with pytest.raises(ValueError, match="NoisyGDClassifier requires y"):
        model().fit(X, None, X_public=X_public)
    with pytest.raises(ValueError, match="no public rows"):
        model().fit(X, y)


def test_all_zero_public_rows_are_refused_before_the_budget(data):
    X, y, _, _, _ = data
    accountant = RDPAccountant(epsilon=10.0, delta=1e-5)
    with pytest.raises(ValueError, match="norm_quantile"):
        model(preprocessor="passthrough", accountant=accountant).fit(X, y, X_public=np.zeros((10, X.shape[1])))
    assert accountant.n_fits == 0


@pytest.mark.parametrize(
    "params",
    [
        dict(epsilon=0),
        dict(delta=1.0),
        dict(clip=0),
        dict(clip=np.inf),
        dict(n_iter=0),
        dict(learning_rate=-1),
        dict(norm_quantile=0),
        dict(intercept_scaling=1e300),
        dict(neighboring="swap"),
    ],
)
def test_bad_parameters_are_named(data, params):
    X, y, X_public, _, _ = data
    with pytest.raises(InvalidParameterError, match=list(params)[0]):
        model(**params).fit(X, y, X_public=X_public)
