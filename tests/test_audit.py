"""Audit of our claims: sampled lower bounds on epsilon never exceed skpate's upper bounds,
and refute NZC's "near-zero" claim. Plus randomness and systematic bad input to the estimator."""

import warnings

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from skpate import NZC, ConfidentGNMax, GNMax, InteractiveGNMax, LNMax, PATEClassifier, PrivacyLeakWarning, analyze
from skpate.audit import audit, claimed_epsilon
from skpate.privacy import gdp_epsilon

N_TRIALS = 200_000
DELTA = 1e-5


def test_lnmax_audit_is_sharp_and_below_its_pure_dp_claim():
    """LNMax(scale=1) is 2-DP (PATE 2017 Thm. 3). Far from a tie the flip probability ratio tends to e^2."""
    result = audit(LNMax(scale=1.0), [8, 2], [7, 3], n_trials=N_TRIALS, random_state=0)
    assert result.output == 1 and result.direction == "neighbour"
    assert 1.4 < result.epsilon_lower_bound <= 2.0
    assert result.epsilon_lower_bound <= claimed_epsilon(LNMax(scale=1.0), [8, 2], DELTA)


def test_audit_refutes_a_wrong_claim():
    """The test has teeth: a claim of half the true cost (1-DP for scale 1) is disproved."""
    assert audit(LNMax(scale=1.0), [8, 2], [7, 3], n_trials=N_TRIALS, random_state=1).epsilon_lower_bound > 1.0


@pytest.mark.parametrize(
    "aggregator, votes, neighbour",
    [
        (LNMax(scale=1.0), [3, 2], [2, 3]),
        (LNMax(scale=2.0), [10, 0, 0], [9, 1, 0]),
        (GNMax(sigma=1.0), [3, 2], [2, 3]),
        (GNMax(sigma=1.0), [6, 4], [5, 5]),
        (GNMax(sigma=2.0), [12, 0, 0], [11, 1, 0]),
        (ConfidentGNMax(threshold=8, sigma_threshold=1.0, sigma=1.0), [8, 2], [7, 3]),
        (ConfidentGNMax(threshold=8, sigma_threshold=1.0, sigma=1.0), [6, 4], [5, 5]),
        (ConfidentGNMax(threshold=5, sigma_threshold=2.0, sigma=1.0), [10, 0], [9, 1]),
    ],
)
def test_lower_bound_never_exceeds_the_claimed_bounds(aggregator, votes, neighbour):
    result = audit(aggregator, votes, neighbour, n_trials=N_TRIALS, delta=DELTA, random_state=0)
    assert result.epsilon_lower_bound <= claimed_epsilon(aggregator, votes, DELTA)
    assert result.epsilon_lower_bound <= claimed_epsilon(aggregator, neighbour, DELTA)
    # The data-dependent bound at a histogram covers the direction from that histogram.
    forward = audit(aggregator, votes, neighbour, n_trials=N_TRIALS, delta=DELTA, random_state=1)
    if forward.direction == "votes":
        assert forward.epsilon_lower_bound <= claimed_epsilon(aggregator, votes, DELTA, data_dependent=True)
    else:
        assert forward.epsilon_lower_bound <= claimed_epsilon(aggregator, neighbour, DELTA, data_dependent=True)


def test_interactive_gnmax_audit():
    aggregator = InteractiveGNMax(threshold=2, sigma_threshold=1.0, sigma=1.0, confidence=0.9)
    proba = np.array([0.5, 0.5])
    result = audit(aggregator, [8, 2], [7, 3], n_trials=N_TRIALS, delta=DELTA, random_state=0, student_proba=proba)
    assert 0 < result.epsilon_lower_bound <= claimed_epsilon(aggregator, [8, 2], DELTA, student_proba=proba)


def test_nzc_audit_disproves_near_zero_cost_and_the_honest_bound_holds():
    """NZC with the paper's constant 1e100: the boosted plurality never moves under noise, so one
    teacher flipping a tie flips the output with probability 1: far from "near-zero" epsilon."""
    aggregator = NZC(constant=1e100, scale=20.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        result = audit(aggregator, [5, 5], [4, 6], n_trials=N_TRIALS, delta=DELTA, random_state=0)
        honest = claimed_epsilon(aggregator, [5, 5], DELTA)
    assert result.counts[1] == N_TRIALS and result.neighbour_counts[2] == N_TRIALS
    assert result.epsilon_lower_bound > 10.0  # log(N / log(1/alpha')) with 200k trials
    assert honest >= result.epsilon_lower_bound


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(votes=[5, 5], neighbour_votes=[3, 7]), "one teacher"),
        (dict(votes=[5, 5], neighbour_votes=[5, 5]), "one teacher"),
        (dict(votes=[5, 5], neighbour_votes=[4, 5, 1]), "same classes"),
        (dict(votes=[5, 5], neighbour_votes=[4, 6], n_trials=0), "n_trials"),
        (dict(votes=[5, 5], neighbour_votes=[4, 6], n_trials=True), "n_trials"),
        (dict(votes=[5, 5], neighbour_votes=[4, 6], n_trials=10.0), "n_trials"),
        (dict(votes=[5, 5], neighbour_votes=[4, 6], delta=1.0), "delta"),
        (dict(votes=[5, 5], neighbour_votes=[4, 6], alpha=0.0), "alpha"),
        (dict(votes=[5, np.nan], neighbour_votes=[4, 6]), "finite"),
    ],
)
def test_bad_audit_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        audit(GNMax(1.0), **kwargs)


# ----------------------------------------------------------------- randomness


def test_unseeded_aggregation_draws_fresh_os_entropy():
    votes = np.tile([[5, 5, 5]], (1000, 1))
    first, second = GNMax(10.0).aggregate(votes), GNMax(10.0).aggregate(votes)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(GNMax(10.0).aggregate(votes, random_state=3), GNMax(10.0).aggregate(votes, 3))


# -------------------------------------------------- bad input, systematically


def pate(**params):
    """10 teachers, 50 queries at GNMax(sigma=2), no budget (``epsilon=None``), labels 0, 1, 2."""
    defaults = dict(
        n_teachers=10, aggregator=GNMax(sigma=2.0), max_queries=50, epsilon=None, classes=[0, 1, 2], random_state=0
    )
    return PATEClassifier(DecisionTreeClassifier(max_depth=3), **{**defaults, **params})


BAD_FITS = {
    "inf in public rows": (dict(), lambda X, y, P: (X, y, np.where(P > 2.5, np.inf, P)), "public rows.*infinity"),
    "inf in private rows": (
        dict(),
        lambda X, y, P: (np.where(X > 2.5, np.inf, X), y, P),
        "If the private rows hold infinity",
    ),
    "empty public set": (dict(), lambda X, y, P: (X, y, P[:0]), "no public rows"),
    # Refused only without classes (the label set would come from the private rows); with classes given it fits.
    "one class only": (dict(classes=None), lambda X, y, P: (X, np.zeros_like(y), P), "one class"),
    "unlabeled-only y": (dict(), lambda X, y, P: (X, -np.ones_like(y), None), "no private rows"),
    "mismatched lengths": (dict(), lambda X, y, P: (X, y[:-5], P), "inconsistent"),
    "public rows of another width": (dict(), lambda X, y, P: (X, y, P[:, :2]), "features"),
    "negative n_teachers": (dict(n_teachers=-2), None, "n_teachers"),
    "more teachers than rows": (dict(n_teachers=601), None, "exceeds"),
    "unknown aggregator": (dict(aggregator="gnmac"), None, "aggregator"),
    "sigma = 0": (dict(aggregator=GNMax(sigma=0.0)), None, "sigma"),
    "sigma = nan": (dict(aggregator=GNMax(sigma=np.nan)), None, "sigma"),
    "scale < 0": (dict(aggregator=LNMax(scale=-1.0)), None, "scale"),
    "threshold above n_teachers": (dict(aggregator=ConfidentGNMax(threshold=10.5)), None, "threshold"),
    "threshold = 0": (dict(aggregator=ConfidentGNMax(threshold=0)), None, "threshold"),
    "sigma_threshold = 0": (dict(aggregator=ConfidentGNMax(threshold=5, sigma_threshold=0)), None, "sigma_threshold"),
    "confidence > 1": (dict(aggregator=InteractiveGNMax(threshold=5, confidence=1.5)), None, "confidence"),
    "NZC without noise": (dict(aggregator=NZC(constant=1.0)), None, "scale"),
    "NZC negative constant": (dict(aggregator=NZC(constant=-1.0, sigma=1.0)), None, "constant"),
    "delta = 0": (dict(delta=0.0), None, "delta"),
    "delta = 1": (dict(delta=1.0), None, "delta"),
    "max_queries = 0": (dict(max_queries=0), None, "max_queries"),
    "n_rounds = 0": (dict(n_rounds=0), None, "n_rounds"),
    "unknown query strategy": (dict(query_strategy="active"), None, "query_strategy"),
}


@pytest.mark.parametrize("case", list(BAD_FITS))
def test_bad_input_is_a_clear_error_and_leaves_no_partial_state(three_class_split_small, case):
    params, corrupt, match = BAD_FITS[case]
    X, y, X_pub = three_class_split_small
    if corrupt is not None:
        X, y, X_pub = corrupt(X, y, X_pub)
    clf = pate(**params)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y, X_public=X_pub)
    assert not [name for name in vars(clf) if name.endswith("_") and not name.startswith("_")]


def test_failed_refit_keeps_the_previous_fit_whole(three_class_split_small):
    X, y, X_pub = three_class_split_small
    clf = pate().fit(X, y, X_public=X_pub)
    before = {name: value for name, value in vars(clf).items() if name.endswith("_")}
    with pytest.raises(ValueError, match="threshold"):
        clf.set_params(aggregator=ConfidentGNMax(threshold=11)).fit(X, y, X_public=X_pub)
    after = {name: value for name, value in vars(clf).items() if name.endswith("_")}
    assert before.keys() == after.keys() and all(before[name] is after[name] for name in before)


@pytest.mark.parametrize(
    "aggregator",
    [LNMax(scale=1.0), GNMax(sigma=5.0), ConfidentGNMax(threshold=200, sigma_threshold=150.0, sigma=40.0)],
)
def test_claimed_epsilon_is_what_a_one_query_fit_publishes(aggregator):
    # The audits check the epsilon skpate publishes (exact Gaussian DP for GNMax: tighter than the RDP curve).
    votes = np.array([[240, 10]])
    published = analyze(votes, aggregator, DELTA, answered=[True]).epsilon
    assert claimed_epsilon(aggregator, votes, DELTA) == pytest.approx(published, rel=1e-12)
    assert claimed_epsilon(aggregator, [125, 125], DELTA) == claimed_epsilon(aggregator, votes, DELTA)  # a priori
    if isinstance(aggregator, GNMax):
        assert published == pytest.approx(gdp_epsilon(np.sqrt(2) / 5.0, DELTA), rel=1e-12)
        assert published < claimed_epsilon(aggregator, [125, 125], DELTA, data_dependent=True)  # RDP, at a tie
