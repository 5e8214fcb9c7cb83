"""Aggregators: the noise they claim, their randomness, their errors, NZC's leak."""

import warnings

import numpy as np
import pytest
from scipy.stats import binomtest, norm
from sklearn.base import clone

from skpate import NZC, ConfidentGNMax, GNMax, InteractiveGNMax, LNMax, Plurality, PrivacyLeakWarning
from skpate.privacy import bounds

N_DRAWS = 100_000


def frequency_interval(hits, n=N_DRAWS):
    return binomtest(int(hits), n).proportion_ci(confidence_level=0.999, method="exact")


# ------------------------------------------------ the noise they claim


def test_lnmax_flip_rate_is_the_laplace_probability():
    votes = np.tile([60, 40], (N_DRAWS, 1))
    labels = LNMax(scale=20).aggregate(votes, random_state=0)
    z = 20 / 20  # gap / scale
    exact = (2 + z) / (4 * np.exp(z))  # two classes: Lemma 4 is exact
    ci = frequency_interval(np.count_nonzero(labels == 1))
    assert ci.low <= exact <= ci.high


def test_gnmax_flip_rate_is_the_gaussian_probability():
    votes = np.tile([60, 40], (N_DRAWS, 1))
    labels = GNMax(sigma=15).aggregate(votes, random_state=1)
    exact = norm.cdf(-20 / (np.sqrt(2) * 15))  # two classes: Prop. 7 is exact
    ci = frequency_interval(np.count_nonzero(labels == 1))
    assert ci.low <= exact <= ci.high


@pytest.mark.parametrize("aggregator, logq", [(GNMax(sigma=10), bounds.logq_gaussian),
                                              (LNMax(scale=10), bounds.logq_laplace)])  # fmt: skip
def test_five_class_flip_rate_is_below_the_q_bound(aggregator, logq):
    row = np.array([[50, 35, 30, 20, 15]])
    labels = aggregator.aggregate(np.repeat(row, N_DRAWS, axis=0), random_state=2)
    q = np.exp(logq(row, next(iter(aggregator.get_params().values())))[0])
    ci = frequency_interval(np.count_nonzero(labels != 0))
    assert ci.low <= q  # the union bound holds ...
    assert ci.high > 0.5 * q  # ... and is not loose by orders of magnitude: the noise is there


def test_confident_gnmax_answer_rate_and_no_answer_label():
    votes = np.tile([180, 50, 20], (N_DRAWS, 1))
    labels, answered = ConfidentGNMax(threshold=200, sigma_threshold=30, sigma=10).aggregate(
        votes, random_state=3, return_answered=True
    )
    exact = norm.sf((200 - 180) / 30)
    ci = frequency_interval(np.count_nonzero(answered))
    assert ci.low <= exact <= ci.high
    assert np.all(labels[~answered] == -1) and np.all(labels[answered] >= 0)


def test_interactive_gnmax_branches():
    votes = np.array([[240, 10, 0], [100, 100, 50], [100, 100, 50]])
    proba = np.array([[0.0, 1.0, 0.0], [0.0, 0.05, 0.95], [0.34, 0.33, 0.33]])
    agg = InteractiveGNMax(threshold=100, sigma_threshold=1.0, sigma=1.0, confidence=0.9)
    labels, answered = agg.aggregate(votes, random_state=0, student_proba=proba, return_answered=True)
    # Row 0: teachers disagree with the student (w = 240 >> T): teachers answer, class 0.
    # Row 1: w max = 100 - 250 * 0.05 = 87.5 < T, student confident: its label 2, not paid as an answer.
    # Row 2: w max = 100 - 250 * 0.33 = 17.5 < T, student unsure: no answer.
    np.testing.assert_array_equal(labels, [0, 2, -1])
    np.testing.assert_array_equal(answered, [True, False, False])


def test_plurality_is_exact_and_infinitely_costly():
    votes = np.array([[1, 5, 2], [4, 4, 0], [0, 0, 8]])
    np.testing.assert_array_equal(Plurality().aggregate(votes), [1, 0, 2])
    assert np.all(np.isinf(Plurality().privacy_cost(votes)))
    assert not Plurality().is_private


# -------------------------------------------------------------- randomness


def test_seeded_noise_is_reproducible_and_unseeded_is_fresh():
    votes = np.tile([50, 50, 49], (1000, 1))
    agg = GNMax(sigma=5)
    np.testing.assert_array_equal(agg.aggregate(votes, random_state=7), agg.aggregate(votes, random_state=7))
    assert np.any(agg.aggregate(votes) != agg.aggregate(votes))
    # A Generator is used as is: the draws of the int seed 0 first, then fresh ones as it advances.
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(agg.aggregate(votes, random_state=rng), agg.aggregate(votes, random_state=0))
    assert np.any(agg.aggregate(votes, random_state=rng) != agg.aggregate(votes, random_state=0))
    # A legacy RandomState seeds the noise: reproducible, different for another seed, advanced by each use.
    legacy = np.random.RandomState(0)
    first = agg.aggregate(votes, random_state=legacy)
    np.testing.assert_array_equal(first, agg.aggregate(votes, random_state=np.random.RandomState(0)))
    assert np.any(first != agg.aggregate(votes, random_state=np.random.RandomState(1)))
    assert np.any(first != agg.aggregate(votes, random_state=legacy))
    with pytest.raises(ValueError, match="random_state"):
        agg.aggregate(votes, random_state="seed")


# ------------------------------------------------------------------ NZC


def test_nzc_with_the_papers_constant_is_the_plurality_and_leaks():
    agg = NZC(constant=1e100, sigma=1e4)
    neighbours = [np.tile([50, 49], (2000, 1)), np.tile([49, 50], (2000, 1))]  # one teacher moved its vote
    with pytest.warns(PrivacyLeakWarning, match="near-zero"):
        outputs = [agg.aggregate(v, random_state=0) for v in neighbours]
    # Despite noise of standard deviation 10,000, the output is the deterministic plurality:
    # the two neighbours are told apart with probability 1.
    assert np.all(outputs[0] == 0) and np.all(outputs[1] == 1)
    with pytest.warns(PrivacyLeakWarning):
        cost = agg.privacy_cost(neighbours[0][:1], data_dependent=False)
    assert np.all(cost >= 1e100) or np.all(np.isinf(cost))


def test_nzc_small_constant_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NZC(constant=1.0, sigma=10.0).aggregate([[5, 3]])  # unseeded: a seed warns (SeededNoiseWarning)
        NZC(constant=1.0, scale=10.0).privacy_cost([[5, 3]])


# --------------------------------------------------------------- validation

VALID = np.array([[5, 3, 2], [4, 4, 2]])


@pytest.mark.parametrize(
    "votes, match",
    [
        ([[1.5, 3.5]], "integer"),
        ([[-1, 6]], "negative"),
        ([[np.nan, 5]], "finite"),
        ([[np.inf, 5]], "finite"),
        ([5, 3], "2-d"),
        (np.zeros((0, 3), dtype=int), "at least one query"),
        ([[5], [5]], "2 classes"),
        ([[5, 3], [4, 3]], "same number of teachers"),
        (np.array([["a", "b"]]), "integer"),
        (np.array([[5, 3]], dtype=object), "integer"),
        ([[0, 0]], "no teacher"),
    ],
)
def test_bad_votes(votes, match):
    for method in ("aggregate", "privacy_cost"):
        with pytest.raises(ValueError, match=match):
            getattr(GNMax(1.0), method)(votes)


BAD_NUMBERS = [0, -1.0, np.nan, np.inf, True, "1"]


@pytest.mark.parametrize("value", BAD_NUMBERS)
@pytest.mark.parametrize(
    "make, name",
    [
        (lambda v: LNMax(scale=v), "scale"),
        (lambda v: GNMax(sigma=v), "sigma"),
        (lambda v: ConfidentGNMax(threshold=8, sigma_threshold=v, sigma=1), "sigma_threshold"),
        (lambda v: ConfidentGNMax(threshold=8, sigma_threshold=1, sigma=v), "sigma"),
        (lambda v: NZC(constant=1.0, sigma=v), "sigma"),
        (lambda v: NZC(constant=1.0, scale=v), "scale"),
    ],
)
def test_bad_noise_parameters(make, name, value):
    with pytest.raises(ValueError, match=name):
        make(value).aggregate(VALID, random_state=0)


@pytest.mark.parametrize("threshold", [0, -5, 10.5, 11, np.nan, "8"])
def test_threshold_outside_zero_n_teachers(threshold):
    with pytest.raises(ValueError, match="threshold"):
        ConfidentGNMax(threshold=threshold, sigma_threshold=1, sigma=1).privacy_cost(VALID, answered=[True, False])


def test_threshold_at_n_teachers_is_accepted():
    ConfidentGNMax(threshold=10, sigma_threshold=1, sigma=1).aggregate(VALID, random_state=0)


@pytest.mark.parametrize("confidence", [-0.1, 1.1, "high"])
def test_bad_confidence(confidence):
    proba = np.full((2, 3), 1 / 3)
    with pytest.raises(ValueError, match="confidence"):
        InteractiveGNMax(threshold=5, confidence=confidence).aggregate(VALID, student_proba=proba)


def test_nzc_needs_exactly_one_noise_and_non_negative_constant():
    for agg in (NZC(constant=1.0), NZC(constant=1.0, scale=1.0, sigma=1.0)):
        with pytest.raises(ValueError, match="exactly one of scale"):
            agg.aggregate(VALID)
    with pytest.raises(ValueError, match="constant"):
        NZC(constant=-1.0, sigma=1.0).aggregate(VALID)


@pytest.mark.parametrize(
    "answered, match",
    [
        (None, "answered"),
        ([True], "shape"),
        ([1, 0], "boolean"),
    ],
)
def test_bad_answered_for_threshold_aggregators(answered, match):
    agg = ConfidentGNMax(threshold=8, sigma_threshold=1, sigma=1)
    with pytest.raises(ValueError, match=match):
        agg.privacy_cost(VALID, answered=answered)


def test_answered_with_false_entries_for_gnmax():
    with pytest.raises(ValueError, match="answers every query"):
        GNMax(1.0).privacy_cost(VALID, answered=np.array([True, False]))


def test_orders_must_exceed_one():
    with pytest.raises(ValueError, match="orders"):
        GNMax(1.0).privacy_cost(VALID, orders=[1.0, 2.0])


@pytest.mark.parametrize(
    "proba, match",
    [
        (None, "student_proba"),
        (np.full((2, 2), 0.5), "shape"),
        (np.full((2, 3), 0.5), "sum to 1"),
        (np.array([[1.5, -0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]]), "non-negative"),
    ],
)
def test_bad_student_proba(proba, match):
    agg = InteractiveGNMax(threshold=5)
    with pytest.raises(ValueError, match=match):
        agg.aggregate(VALID, student_proba=proba)
    with pytest.raises(ValueError, match=match):
        agg.privacy_cost(VALID, answered=np.array([True, False]), student_proba=proba)


# ------------------------------------------------------------ sklearn API


@pytest.mark.parametrize(
    "agg",
    [Plurality(), LNMax(5.0), GNMax(3.0), ConfidentGNMax(8, 2, 1), InteractiveGNMax(5, 2, 1, 0.8), NZC(1.0, sigma=2)],
)
def test_clone_keeps_parameters(agg):
    cloned = clone(agg)
    assert cloned.get_params() == agg.get_params() and cloned is not agg


def test_set_params_changes_the_cost():
    agg = ConfidentGNMax(8, 2, 1)
    answered = np.array([True, True])
    before = agg.privacy_cost(VALID, answered=answered, data_dependent=False)
    after = clone(agg).set_params(sigma=2.0).privacy_cost(VALID, answered=answered, data_dependent=False)
    assert np.all(after < before)


@pytest.mark.parametrize(
    "make",
    [
        lambda f: LNMax(f(2.0)),
        lambda f: GNMax(f(300.0)),
        lambda f: ConfidentGNMax(f(8.0), f(2.0), f(300.0)),
        lambda f: InteractiveGNMax(f(5.0), f(2.0), f(300.0), 0.8),
        lambda f: NZC(f(2048.0), sigma=f(3000.0)),  # 2048 + 1 is 2048 in float16
    ],
    ids=["lnmax", "gnmax", "confident", "interactive", "nzc"],
)
@pytest.mark.parametrize("narrow", [np.float16, np.float32])
def test_noise_given_as_a_narrow_numpy_float_costs_what_its_value_costs(make, narrow):
    """In float16, GNMax's 2 / 300^2 underflows to 0: 1000 answers were reported as epsilon 0."""
    answered = np.array([True, True])
    wide, small = make(float), make(narrow)
    proba = {"student_proba": np.full((2, 3), 1 / 3)} if isinstance(wide, InteractiveGNMax) else {}
    assert small.apriori_cost(1000) == wide.apriori_cost(1000)
    assert small.apriori_cost(1000).epsilon(1e-5) == wide.apriori_cost(1000).epsilon(1e-5)
    for data_dependent in (False, True):
        np.testing.assert_array_equal(
            small.privacy_cost(VALID, answered=answered, data_dependent=data_dependent, **proba),
            wide.privacy_cost(VALID, answered=answered, data_dependent=data_dependent, **proba),
        )
