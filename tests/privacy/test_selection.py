"""The privacy of the private selection: the exponential mechanism, its sensitivity, and why it costs no epsilon.

Each function of :mod:`skpate.privacy.selection` is checked against hand-derived values, an independent
numerical computation, its properties, and an empirical audit of neighbouring held-out sets.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta, norm

from skpate.privacy.selection import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gdp_pure_epsilon,
    held_out_score_sensitivity,
)


def _pure_tradeoff(epsilon, alpha):
    """Trade-off function of epsilon-DP ([DRS22] Prop. 2.5)."""
    return np.maximum.reduce([np.zeros_like(alpha), 1 - np.exp(epsilon) * alpha, np.exp(-epsilon) * (1 - alpha)])


def _gaussian_tradeoff(mu, alpha):
    return norm.cdf(norm.ppf(1 - alpha) - mu)


def _largest_dominated_epsilon(mu):
    """Independent computation: bisection on epsilon of ``f_eps >= G_mu`` on a fine grid of alpha (and the kink)."""
    grid = np.concatenate([np.logspace(-12, -1, 2000), np.linspace(0.1, 1, 2000)])
    low, high = 0.0, 10.0
    for _ in range(60):
        middle = (low + high) / 2
        alpha = np.append(grid, 1 / (1 + np.exp(middle)))
        ok = np.all(_pure_tradeoff(middle, alpha) >= _gaussian_tradeoff(mu, alpha) - 1e-12)
        low, high = (middle, high) if ok else (low, middle)
    return low


@pytest.mark.parametrize("mu", [0.05, 0.268, 0.5, 1.0, 2.0, 4.0])
def test_gdp_pure_epsilon_is_the_largest_pure_epsilon_within_mu_gdp(mu):
    assert gdp_pure_epsilon(mu) == pytest.approx(_largest_dominated_epsilon(mu), rel=1e-6, abs=1e-9)


def test_gdp_pure_epsilon_hand_values_and_edges():
    # log(Phi(1/2) / Phi(-1/2)) by hand: Phi(0.5) = 0.691462, Phi(-0.5) = 0.308538.
    assert gdp_pure_epsilon(1.0) == pytest.approx(np.log(0.6914624612740131 / 0.3085375387259869), rel=1e-12)
    assert gdp_pure_epsilon(0.0) == 0.0
    assert gdp_pure_epsilon(np.inf) == np.inf
    # Slope at 0: 2 phi(0) = sqrt(2 / pi).
    assert gdp_pure_epsilon(1e-6) / 1e-6 == pytest.approx(np.sqrt(2 / np.pi), rel=1e-6)
    np.testing.assert_array_equal(gdp_pure_epsilon(np.array([0.0, np.inf])), [0.0, np.inf])
    with pytest.raises(ValueError, match="mu must be >= 0"):
        gdp_pure_epsilon(-1.0)


@given(st.floats(0.01, 8.0))
@settings(max_examples=50, deadline=None)
def test_gdp_pure_epsilon_is_tight_and_increasing(mu):
    epsilon = gdp_pure_epsilon(mu)
    assert gdp_pure_epsilon(mu * 1.01) > epsilon
    # A hair more: randomized response's point (a*, a*) falls below G_mu, so the domination fails.
    star = 1 / (1 + np.exp(epsilon * 1.001))
    assert star < _gaussian_tradeoff(mu, star)


def test_the_held_out_score_moves_by_one_under_either_relation():
    assert held_out_score_sensitivity("replace-one") == held_out_score_sensitivity("add-remove") == 1.0
    with pytest.raises(ValueError, match="neighboring"):
        held_out_score_sensitivity("swap")


def test_exponential_mechanism_hand_values():
    np.testing.assert_allclose(exponential_mechanism_probabilities([0, 1], 2.0), [1 / (1 + np.e), np.e / (1 + np.e)])
    np.testing.assert_allclose(exponential_mechanism_probabilities([3, 3, 3], 1.0), [1 / 3] * 3)
    # Large scores do not overflow (log-softmax).
    np.testing.assert_allclose(exponential_mechanism_probabilities([1e6, 0], 1.0), [1, 0])
    with pytest.raises(ValueError, match="positive finite"):
        exponential_mechanism_probabilities([0, 1], 0.0)


@given(
    st.lists(st.integers(0, 10_000), min_size=2, max_size=6),
    st.lists(st.sampled_from([-1, 0, 1]), min_size=6, max_size=6),
    st.floats(0.01, 5.0),
)
@settings(max_examples=200, deadline=None)
def test_exponential_mechanism_is_epsilon_dp_for_scores_that_move_by_one(scores, moves, epsilon):
    scores = np.asarray(scores, dtype=float)
    neighbour = scores + np.asarray(moves[: scores.size])
    p, q = exponential_mechanism_probabilities(scores, epsilon), exponential_mechanism_probabilities(neighbour, epsilon)
    assert np.all(p <= np.exp(epsilon) * q * (1 + 1e-9) + 1e-300)  # + the subnormal floats' rounding


def test_the_sampler_draws_the_mechanisms_probabilities():
    rng = np.random.default_rng(0)
    scores, epsilon = np.array([10.0, 11.0, 12.5]), 1.0
    draws = np.bincount([exponential_mechanism(scores, epsilon, rng) for _ in range(20_000)], minlength=3)
    expected = exponential_mechanism_probabilities(scores, epsilon) * 20_000
    assert np.all(np.abs(draws - expected) < 5 * np.sqrt(expected))


def test_audit_the_choice_on_neighbouring_held_out_rows_stays_within_its_epsilon():
    """Two held-out sets that differ in one row, against three fixed candidates' predictions.

    The row is adversarial: it is predicted correctly by candidate 0 only in one set and by candidates 1 and 2
    only in the other, the largest move of the scores. A Clopper-Pearson lower bound on the privacy loss of
    the event "candidate 0 is chosen", from 40,000 draws each, must stay below the mechanism's epsilon, and
    the audit must have power (its bound is above half the epsilon).
    """
    rng = np.random.default_rng(1)
    mu = 1.0
    epsilon = gdp_pure_epsilon(mu)
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0])
    predictions = np.array([[0, 1, 0, 1, 0, 1, 0, 1], [0, 1, 0, 1, 0, 1, 0, 1], [0, 1, 0, 1, 0, 1, 0, 1]])
    y_neighbour = y.copy()
    predictions = predictions.copy()
    predictions[0, -1], predictions[1, -1], predictions[2, -1] = 0, 1, 1  # the replaced row's predictions
    y[-1], y_neighbour[-1] = 0, 1
    n = 40_000

    def chosen_zero(labels):
        scores = (predictions == labels).sum(axis=1)
        return sum(exponential_mechanism(scores, epsilon, rng) == 0 for _ in range(n))

    k, k_neighbour = chosen_zero(y), chosen_zero(y_neighbour)
    p_low = beta.ppf(0.0005, k, n - k + 1)
    q_high = beta.ppf(0.9995, k_neighbour + 1, n - k_neighbour)
    empirical = np.log(p_low / q_high)
    assert empirical <= epsilon
    assert empirical > 0.5 * epsilon
