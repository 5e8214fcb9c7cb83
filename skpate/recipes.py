"""Recipes: ``PATEClassifier`` configurations that won measured comparisons, as one call."""

from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

from ._pate import PATEClassifier
from ._validation import check_positive_int
from .aggregators import GNMax

__all__ = ["make_tabular_pate"]


def make_tabular_pate(
    preprocessor="passthrough", *, epsilon, classes, delta=1e-5, n_teachers=250, n_rounds=5, max_answers=2000,
    random_state=None, n_jobs=None, **params,
):  # fmt: skip
    """A budget-first ``PATEClassifier`` for tabular data: forest teachers, a smooth forest student, active queries.

    The recipe that did best on UCI Adult at publishable epsilon 0.5 to 4
    (``benchmarks/adult_sweep.py``, chosen on the evaluation half, i.e. with
    non-private tuning of a handful of settings):

    * teachers: random forests with ``max_features=None`` (the papers'
      teachers; 250 of them on 32,561 rows have a noise-free plurality of 85%);
    * noise: GNMax with ``sigma = n_teachers / 1.75``, as many queries as
      ``epsilon`` covers (more queries, each noisier, than ``PATEClassifier``'s
      budget default of ``n_teachers / 3``, which suits students that memorise),
      unless that is more than ``max_answers``: then the noise is lowered until
      ``max_answers`` queries spend the budget (``GNMax.for_budget``). With
      uncertainty sampling a few thousand cleaner labels beat more noisy ones
      (Adult, 250 teachers: at epsilon 4, 2,182 queries at sigma n/3.5 gave
      0.848 against 0.844 for all 8,140 public rows at n/1.75);
    * student: a random forest whose leaves hold at least 5 rows, so that it
      averages noisy labels instead of memorising them;
    * queries: ``n_rounds`` rounds of uncertainty sampling (the student of each
      round picks the public rows it is least sure of); choosing rows from the
      student is post-processing of released labels and of public rows, so it
      costs nothing.

    Nothing here is fitted on data or depends on it: the function only
    configures the estimator. The publishable epsilon is ``epsilon`` (a budget
    fixed before the fit).

    Parameters
    ----------
    preprocessor : transformer or "passthrough", default="passthrough"
        Cloned in front of every teacher and of the student. It is fitted on
        each teacher's private partition (private) and on the public rows (the
        student's); use one fixed by a public schema (e.g.
        :func:`skpate.datasets.adult_encoder`) when the student must not
        depend on private rows at all.
    epsilon : float > 0
        The privacy budget, fixed before the fit.
    classes : array-like
        The public label set.
    delta : float in (0, 1), default=1e-5
    n_teachers : int, default=250
    n_rounds : int, default=5
        Rounds of uncertainty sampling; 1 queries random public rows.
    max_answers : int, default=2000
        Above this many queries, the budget buys less noise instead of more
        queries. A public quantity: the noise is a function of ``epsilon``,
        ``delta``, ``n_teachers`` and ``max_answers`` only.
    random_state : int, RandomState instance or None, default=None
    n_jobs : int, default=None
    **params
        Any other :class:`PATEClassifier` parameter (``accountant``,
        ``max_queries``, ``warm_start``, ...).

    Returns
    -------
    pate : PATEClassifier
        Unfitted.

    Examples
    --------
    >>> from skpate.datasets import adult_encoder
    >>> from skpate.recipes import make_tabular_pate
    >>> pate = make_tabular_pate(adult_encoder(), epsilon=1.0, classes=["<=50K", ">50K"])
    >>> pate.aggregator, pate.query_strategy, pate.n_rounds, pate.epsilon
    (GNMax(sigma=142.85714285714286), 'uncertainty', 5, 1.0)
    """
    check_positive_int("max_answers", max_answers, " (a number of queries)")
    sigma = min(n_teachers / 1.75, GNMax.for_budget(epsilon, delta, max_answers).sigma)
    teacher = make_pipeline(clone(preprocessor, safe=False), RandomForestClassifier(max_features=None))
    student = make_pipeline(clone(preprocessor, safe=False), RandomForestClassifier(min_samples_leaf=5))
    return PATEClassifier(
        teacher, n_teachers=n_teachers, aggregator=GNMax(sigma=sigma), student=student, epsilon=epsilon,
        delta=delta, classes=classes,
        query_strategy="uncertainty" if n_rounds > 1 else "random", n_rounds=n_rounds, random_state=random_state,
        n_jobs=n_jobs, **params,
    )  # fmt: skip
