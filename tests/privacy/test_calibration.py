"""privacy/sensitivity.py and privacy/calibration.py: hand-derived values, edge cases, properties.

The sensitivities are checked where they are attained by the mechanisms in test_refit.py (count tables) and
test_linear.py (clipped gradient sums); here, the pure functions themselves.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skpate import ConfidentGNMax, GNMax
from skpate.privacy import Cost, bounds
from skpate.privacy.calibration import (
    COUNT_SHARE,
    binned_sum_sigma,
    count_sigma,
    gaussian_budget,
    gaussian_share_epsilon,
    gaussian_sigma,
    gradient_sigma,
    largest_count,
    private_budget_split,
    release_cost,
    smallest_noise,
)
from skpate.privacy.cost import gaussian_argmax_cost
from skpate.privacy.gdp import gdp_epsilon, gdp_mu
from skpate.privacy.sensitivity import (
    NEIGHBORING,
    check_neighboring,
    clipped_sum_sensitivity,
    count_sensitivity,
    count_tables_sensitivity,
)
from skpate.privacy.smooth import gnss_rdp


def test_count_tables_sensitivity_by_hand():
    # One row moves one count out and one in per table under replacement (2 T unit entries), one under add/remove.
    assert count_tables_sensitivity(6) == pytest.approx(np.sqrt(12))
    assert count_tables_sensitivity(6, "add-remove") == pytest.approx(np.sqrt(6))
    assert count_tables_sensitivity(1) == pytest.approx(np.sqrt(2)) and count_tables_sensitivity(0) == 0.0
    np.testing.assert_allclose(count_tables_sensitivity([1, 4, 9], "add-remove"), [1.0, 2.0, 3.0])


def test_clipped_sum_and_count_sensitivity_by_hand():
    assert clipped_sum_sensitivity(0.5) == 1.0 and clipped_sum_sensitivity(0.5, "add-remove") == 0.5
    np.testing.assert_allclose(clipped_sum_sensitivity([0.25, 2.0]), [0.5, 4.0])
    assert count_sensitivity("add-remove") == 1.0 and count_sensitivity("replace-one") == 0.0


@pytest.mark.parametrize("function", [count_tables_sensitivity, clipped_sum_sensitivity])
def test_an_unknown_relation_is_named(function):
    assert set(NEIGHBORING) == {"replace-one", "add-remove"}
    with pytest.raises(ValueError, match="neighboring must be 'replace-one' or 'add-remove', got 'add-one'"):
        function(1, "add-one")
    with pytest.raises(ValueError, match="neighboring"):
        check_neighboring(None)


@given(st.integers(1, 10_000), st.floats(0.01, 100.0))
def test_replacement_is_an_addition_and_a_removal(n_partitions, clip):
    # Properties: replace-one is at most twice add-remove (triangle inequality), at least add-remove, monotone.
    tables = count_tables_sensitivity(n_partitions)
    assert (
        count_tables_sensitivity(n_partitions, "add-remove")
        <= tables
        <= 2 * count_tables_sensitivity(n_partitions, "add-remove")
    )
    assert count_tables_sensitivity(n_partitions + 1) > tables
    assert clipped_sum_sensitivity(clip) == pytest.approx(2 * clipped_sum_sensitivity(clip, "add-remove"))


def test_noise_for_a_budget_by_hand():
    # The Gaussian mechanism of sensitivity D at sigma is D / sigma-GDP: sigma = D / mu.
    assert gaussian_sigma(2.0, 0.5) == 4.0
    mu = 0.5
    assert count_sigma(8, mu) == pytest.approx(4.0 / 0.5)  # sqrt(2 * 8) = 4
    assert count_sigma(8, mu, "add-remove") == pytest.approx(np.sqrt(8) / 0.5)
    # 50 steps of sensitivity 2 * 0.5 compose to sqrt(50) / sigma-GDP.
    assert gradient_sigma(0.5, 50, mu) == pytest.approx(np.sqrt(50) / 0.5)
    assert gradient_sigma(0.5, 50, mu, "add-remove") == pytest.approx(0.5 * np.sqrt(50) / 0.5)


@pytest.mark.parametrize("count", [np.uint8, np.int8, np.uint16, np.uint64])
def test_a_count_of_any_integer_type_gets_the_noise_of_its_value(count):
    # numpy takes sqrt(np.uint8(50)) in float16 (7.0703 for 7.0711): the noise would be 0.011% too small.
    assert gradient_sigma(0.5, count(50), 0.5) == gradient_sigma(0.5, 50, 0.5) == np.sqrt(50) / 0.5
    assert binned_sum_sigma(0.5, count(50), 0.5) == binned_sum_sigma(0.5, 50, 0.5)
    assert count_sigma(count(8), 0.5) == count_sigma(8, 0.5)


@given(st.floats(0.05, 20.0), st.floats(0.01, 1.0))
def test_a_share_of_a_budget_composes_back_to_it(epsilon, share):
    # The shares' mu^2 add up to the budget's mu^2 ([DRS22] Cor. 3.3), so a share costs at most the budget.
    mu = float(gdp_mu(epsilon, 1e-5))
    part = gaussian_share_epsilon(epsilon, 1e-5, share)
    assert part <= epsilon * (1 + 1e-9)
    assert float(gdp_mu(part, 1e-5)) ** 2 == pytest.approx(share * mu**2, rel=1e-6)


def test_the_row_count_share_under_add_remove():
    mu = float(gdp_mu(1.0, 1e-5))
    assert private_budget_split(mu, "replace-one") == (mu, None)
    steps_mu, count_noise = private_budget_split(mu, "add-remove")
    # The steps and the count (sensitivity 1 at count_noise) compose to mu exactly.
    assert steps_mu**2 + (1.0 / count_noise) ** 2 == pytest.approx(mu**2, rel=1e-12)
    assert (1.0 / count_noise) ** 2 == pytest.approx(COUNT_SHARE * mu**2, rel=1e-12)
    assert gdp_epsilon(np.sqrt(steps_mu**2 + (1.0 / count_noise) ** 2), 1e-5) == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("narrow", [np.float16, np.float32])
def test_a_budget_of_a_narrow_numpy_float_admits_what_its_value_admits(narrow):
    """numpy compares a Python float with a float16 in float16, where 8.003 <= 8.0 holds: a float16 budget of 8 let a
    filter admit 2222 GNMax answers costing 8.0032 instead of 2220."""
    answer, release = gaussian_argmax_cost(40.0), release_cost(20)
    assert largest_count(answer, narrow(8.0), 1e-5, 10_000) == largest_count(answer, 8.0, 1e-5, 10_000)
    assert gaussian_budget(narrow(8.0), 1e-5, release) == gaussian_budget(8.0, 1e-5, release)
    assert smallest_noise(lambda s: GNMax(sigma=s), narrow(1.0), 1e-5, 100) == smallest_noise(
        lambda s: GNMax(sigma=s), 1.0, 1e-5, 100
    )
    wide = ConfidentGNMax.for_budget(1.0, 1e-5, 100, threshold=60.0, sigma_ratio=3.69921875)
    small = ConfidentGNMax.for_budget(narrow(1.0), 1e-5, 100, threshold=60.0, sigma_ratio=narrow(3.69921875))
    assert small.get_params() == wide.get_params()
    assert small.apriori_cost(100).epsilon(1e-5)[0] <= 1.0


@pytest.mark.parametrize("narrow", [np.float16, np.float32])
def test_the_privacy_functions_compute_in_float64_whatever_the_type_of_their_parameters(narrow):
    """In float16 300^2 overflows: rdp_gaussian(300) was 0 at every order, a free mechanism."""
    orders = np.array([2.0, 8.0, 32.0])
    assert np.array_equal(bounds.rdp_gaussian(narrow(300.0), orders), bounds.rdp_gaussian(300.0, orders))
    assert np.array_equal(bounds.rdp_pure_dp(narrow(0.125), orders), bounds.rdp_pure_dp(0.125, orders))
    beta = float(narrow(0.02))
    assert np.array_equal(gnss_rdp(narrow(0.02), narrow(10.0), orders), gnss_rdp(beta, 10.0, orders))
    assert Cost(release=(narrow(0.02), narrow(10.0))).epsilon(1e-5) == Cost(release=(beta, 10.0)).epsilon(1e-5)
    assert Cost(mu_squared=narrow(0.5), pure=((narrow(0.125), np.uint8(3)),)) == Cost(0.5, ((0.125, 3),))
    assert (np.uint8(200) * Cost(pure=((0.125, 2),))).pure == ((0.125, 400),)  # 200 * 2 wraps to 144 in uint8
