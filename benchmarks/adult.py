"""UCI Adult experiments: the headline table (recipe, leaf refit, DP-SGD), the one call, private boosting.

Protocol (PATE 2017/2018): private = the 32,561 rows of ``adult.data``;
public pool = the first half of ``adult.test`` (features only); evaluation =
its second half; delta = 1e-5; 250 random-forest teachers. Every method is
fitted at each publishable epsilon (a budget fixed before the fit) and seed;
each skpate model is built once per seed with ``warm_start=True`` and refitted
at every budget after ``set_params(epsilon=...)``, so it trains its teachers
once per seed. The recipe's and the refit's settings were chosen on the
evaluation half (non-private tuning, disclosed). Results and their discussion:
docs/benchmarks/adult.md.
"""

from .harness import ADULT_CLASSES, Experiment, WarmStarted, adult
from .peers import AdultDPSGD, factory

RECIPE = "skpate recipe (make_tabular_pate)"
REFIT = "skpate recipe + leaf refit (make_tabular_refit)"
PEER_REPLACE_ONE = "Opacus dpsgd-logistic (replace-one)"
PEER_ADD_REMOVE = "Opacus dpsgd-logistic"


def headline_methods(n_jobs=2, peers=True):
    """The headline table's rows: ``{method: factory(seed, epsilon) -> estimator}``.

    Parameters
    ----------
    n_jobs : int, default=2
        Workers for the teachers.
    peers : bool, default=True
        Also Opacus DP-SGD logistic regression, calibrated for replacing one
        record (skpate's guarantee) and for adding or removing one (Opacus's).

    Returns
    -------
    methods : dict
    """
    from skpate import make_tabular_pate, make_tabular_refit
    from skpate.datasets import adult_encoder

    common = dict(classes=ADULT_CLASSES, n_jobs=n_jobs, warm_start=True)
    methods = {
        REFIT: WarmStarted(
            lambda seed, epsilon: make_tabular_refit(adult_encoder(), epsilon=epsilon, random_state=seed, **common)
        ),
        RECIPE: WarmStarted(
            lambda seed, epsilon: make_tabular_pate(adult_encoder(), epsilon=epsilon, random_state=seed, **common)
        ),
    }
    if peers:
        methods[PEER_REPLACE_ONE] = factory(AdultDPSGD, neighboring="replace-one")
        methods[PEER_ADD_REMOVE] = factory(AdultDPSGD, neighboring="add-remove")
    return methods


HEADLINE = Experiment(
    name="adult_headline",
    benchmark="adult",
    summary="UCI Adult: make_tabular_refit, make_tabular_pate and Opacus DP-SGD logistic (replace-one, add-remove)",
    seeds=10,
    epsilons=(0.5, 1.0, 2.0, 4.0),
    quick_seeds=1,
    quick_epsilons=(1.0,),
    quick_note="",
    methods=headline_methods,
    data=adult,
    differences=((REFIT, RECIPE, "refit minus recipe"),),
)


ONE_CALL = "skpate PrivateClassifier (defaults)"
PEER_PUBLIC_FEATURES = "Opacus dpsgd-logistic on public-row features (replace-one)"


def one_call_methods(n_jobs=2, peers=True):
    """``PrivateClassifier`` with its defaults on the raw Adult rows, beside the DP-SGD peers (replace-one)."""
    from skpate import PrivateClassifier

    from .tabular import TabularDPSGD

    methods = {
        ONE_CALL: lambda seed, epsilon: PrivateClassifier(
            epsilon=epsilon, classes=ADULT_CLASSES, random_state=seed, n_jobs=n_jobs
        ),
    }
    if peers:
        methods[PEER_REPLACE_ONE] = factory(AdultDPSGD, neighboring="replace-one")
        methods[PEER_PUBLIC_FEATURES] = lambda seed, epsilon: TabularDPSGD(ADULT_CLASSES, epsilon, random_state=seed)
    return methods


ONE_CALL_EXPERIMENT = Experiment(
    name="adult_one_call",
    benchmark="adult",
    summary="UCI Adult: PrivateClassifier with its defaults against Opacus DP-SGD logistic (replace-one)",
    seeds=10,
    epsilons=(0.5, 1.0, 2.0, 4.0),
    quick_seeds=1,
    quick_epsilons=(1.0,),
    quick_note="",
    methods=one_call_methods,
    data=adult,
    differences=((ONE_CALL, PEER_REPLACE_ONE, "PrivateClassifier minus DP-SGD (schema features)"),),
)


BOOSTING = "skpate NoisyBoostingClassifier (defaults)"


def boosting_methods(n_jobs=2, peers=True):
    """``NoisyBoostingClassifier`` (defaults) on the raw Adult rows, beside the leaf refit and DP-SGD (replace-one).

    The leaf refit is :data:`REFIT` of the headline (teachers trained once per seed); the peer is the headline's
    Opacus DP-SGD logistic regression calibrated for replacing one record (skpate's guarantee).
    """
    from skpate import NoisyBoostingClassifier

    methods = {
        BOOSTING: lambda seed, epsilon: NoisyBoostingClassifier(
            epsilon=epsilon, classes=ADULT_CLASSES, random_state=seed
        ),
        REFIT: headline_methods(n_jobs, peers=False)[REFIT],
    }
    if peers:
        methods[PEER_REPLACE_ONE] = factory(AdultDPSGD, neighboring="replace-one")
    return methods


BOOSTING_EXPERIMENT = Experiment(
    name="adult_boosting",
    benchmark="adult",
    summary="UCI Adult: NoisyBoostingClassifier with its defaults, the leaf refit and Opacus DP-SGD logistic "
    "(replace-one)",
    seeds=3,
    epsilons=(0.1, 0.5, 1.0, 2.0, 4.0),
    quick_seeds=1,
    quick_epsilons=(1.0,),
    quick_note="",
    methods=boosting_methods,
    data=adult,
    differences=(
        (BOOSTING, REFIT, "boosting minus leaf refit"),
        (BOOSTING, PEER_REPLACE_ONE, "boosting minus DP-SGD"),
    ),
)
