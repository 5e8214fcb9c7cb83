"""skorch CNNs as teachers and students (8x8 digits, CPU, a few seconds)."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits

from skpate import ConfidentGNMax, PATEClassifier

torch = pytest.importorskip("torch")
from skpate.nets import PATECNN, CNNClassifier, make_cnn  # noqa: E402  (needs torch)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    return (X / 16.0)[order].astype(np.float32), y[order]


@pytest.mark.parametrize("shape", [(1, 8, 8), (1, 28, 28), (3, 7, 9)])
def test_module_shapes(shape):
    module = PATECNN(image_shape=shape, n_classes=4)
    assert module(torch.zeros(5, int(np.prod(shape)))).shape == (5, 4)


def test_cnn_learns_digits_with_any_labels(digits):
    X, y = digits
    names = np.array(list("abcdefghij"))
    clf = make_cnn((1, 8, 8), max_epochs=8, random_state=0).fit(X[:1000], names[y[:1000]])
    assert clf.score(X[1000:], names[y[1000:]]) > 0.85
    proba = clf.predict_proba(X[:5])
    assert proba.shape == (5, 10) and np.allclose(proba.sum(axis=1), 1, atol=1e-5)


def test_random_state_makes_training_reproducible(digits):
    X, y = digits
    a = make_cnn((1, 8, 8), max_epochs=3, random_state=1).fit(X[:300], y[:300]).predict_proba(X[1000:1100])
    b = make_cnn((1, 8, 8), max_epochs=3, random_state=1).fit(X[:300], y[:300]).predict_proba(X[1000:1100])
    c = make_cnn((1, 8, 8), max_epochs=3, random_state=2).fit(X[:300], y[:300]).predict_proba(X[1000:1100])
    np.testing.assert_allclose(a, b)
    assert not np.allclose(a, c)


def test_missing_classes_and_wrong_shapes(digits):
    X, y = digits
    keep = np.isin(y, [1, 4, 7])
    clf = make_cnn((1, 8, 8), max_epochs=3, random_state=0).fit(X[keep][:200], y[keep][:200])
    assert list(clf.classes_) == [1, 4, 7] and set(clf.predict(X[:50])) <= {1, 4, 7}
    with pytest.raises(ValueError, match="image_shape"):
        make_cnn((1, 28, 28)).fit(X[:10], y[:10])


def test_vat_student_uses_the_unlabeled_rows(digits):
    X, y = digits
    y_few = np.full(1000, -1)
    y_few[:80] = y[:80]
    params = dict(max_epochs=30, batch_size=32, random_state=0)
    plain = make_cnn((1, 8, 8), **params).fit(X[:80], y[:80]).score(X[1000:], y[1000:])
    vat = make_cnn((1, 8, 8), semi_supervised=True, **params).fit(X[:1000], y_few).score(X[1000:], y[1000:])
    assert vat > plain + 0.03


def test_cnn_teachers_and_student_in_pate(digits):
    X, y = digits
    clf = PATEClassifier(
        make_cnn((1, 8, 8), max_epochs=10, batch_size=16),
        n_teachers=10,
        aggregator=ConfidentGNMax(threshold=6, sigma_threshold=2, sigma=1.5),
        student=make_cnn((1, 8, 8), max_epochs=40, batch_size=16),
        max_queries=150,
        epsilon=None,  # no budget: the papers' protocol (150 queries at this noise)
        classes=np.arange(10),  # the ten digits
        random_state=0,
        n_jobs=2,
    ).fit(X[:1200], y[:1200], X_public=X[1200:1500])
    assert all(isinstance(t, CNNClassifier) for t in clf.teachers_)
    assert clf.n_answered_ > 50
    assert clf.score(X[1500:], y[1500:]) > 0.7
    restored = pickle.loads(pickle.dumps(clf.student_))
    np.testing.assert_array_equal(restored.predict(X[1500:]), clf.predict(X[1500:]))
    assert clone(clf).get_params()["estimator__max_epochs"] == 10
    assert clf.student_.max_epochs == 40


def _seeded_fit_and_predict(X, y, **params):
    """Fit and predict a small seeded CNN; the fitted classifier and its probabilities on a held-out slice."""
    clf = make_cnn((1, 8, 8), max_epochs=2, random_state=3, **params).fit(X[:200], y[:200])
    clf.predict(X[1000:1050])
    return clf, clf.predict_proba(X[1000:1050])


@pytest.mark.parametrize("semi_supervised", [False, True])
def test_fit_and_predict_keep_the_callers_torch_rng(digits, semi_supervised):
    X, y = digits
    torch.manual_seed(12345)
    before = torch.random.get_rng_state()
    _seeded_fit_and_predict(X, y, semi_supervised=semi_supervised)
    assert torch.equal(torch.random.get_rng_state(), before)  # the caller's stream is not reseeded nor consumed


@pytest.mark.parametrize("n_threads", [1, None])
def test_fit_and_predict_keep_the_callers_thread_count(digits, n_threads, monkeypatch):
    X, y = digits
    seen = []
    forward = PATECNN.forward
    monkeypatch.setattr(PATECNN, "forward", lambda self, X: seen.append(torch.get_num_threads()) or forward(self, X))
    previous = torch.get_num_threads()
    caller = 2 if previous != 2 else 3  # differs from the limit (1) and from torch's default
    torch.set_num_threads(caller)
    try:
        _seeded_fit_and_predict(X, y, n_threads=n_threads)
        assert torch.get_num_threads() == caller
    finally:
        torch.set_num_threads(previous)
    assert seen and set(seen) == {n_threads or caller}  # the limit still holds inside fit and predict


def test_same_random_state_same_model_whatever_the_callers_rng(digits):
    X, y = digits
    torch.manual_seed(0)
    first, a = _seeded_fit_and_predict(X, y)
    torch.manual_seed(999)  # another caller state must not matter
    torch.rand(7)
    second, b = _seeded_fit_and_predict(X, y)
    np.testing.assert_array_equal(a, b)
    weights = second.net_.module_.state_dict()
    assert all(torch.equal(w, weights[k]) for k, w in first.net_.module_.state_dict().items())
