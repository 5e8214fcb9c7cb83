"""Recipes: ``PATEClassifier`` configurations that won measured comparisons, as one call."""

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

from ._pate import PATEClassifier
from ._validation import check_positive, check_positive_int
from .aggregators import GNMax, ensemble_noise_divisor
from .privacy.gdp import gdp_mu

__all__ = ["make_tabular_pate", "teachers_for_budget"]

#: Answers a budget should buy (``teachers_for_budget``): on UCI Adult and Fashion-MNIST, fewer answers were what
#: held the student back at low epsilon, and with more, the smaller teachers' weaker votes cost more than they gave.
AUTO_ANSWERS = 800


def teachers_for_budget(epsilon, delta, n_classes, n_answers=AUTO_ANSWERS):
    """The number of teachers at which a budget buys ``n_answers`` answers at the default noise.

    ``PATEClassifier``'s budget noise is relative to the ensemble: GNMax at
    ``sigma = n_teachers / c`` with ``c = 1.75 sqrt(n_classes / 2)``
    (:meth:`skpate.GNMax.for_ensemble`). One answer is then ``mu``-GDP with
    ``mu = sqrt(2) c / n_teachers`` (sensitivity ``sqrt(2)``: replacing one
    teacher moves one vote), and ``m`` answers compose to
    ``sqrt(2 m) c / n_teachers`` (Dong, Roth & Su 2022, Cor. 3.3). The
    budget is ``gdp_mu(epsilon, delta)``, so ``m`` answers fit from
    ``n_teachers = ceil(c sqrt(2 m) / gdp_mu(epsilon, delta))`` on: the
    answers a budget buys grow as the square of the number of teachers,
    each teacher's partition shrinks as its inverse.

    A function of public quantities only: it spends no privacy, and the
    publishable epsilon of the fit stays the budget. Measured at epsilon 0.5
    to 4 (delta 1e-5) on UCI Adult (250 teachers at epsilon 1, about 500 at
    0.5) and Fashion-MNIST (README); a small private set can make the
    partitions too small to learn from (check ``n_private / n_teachers``).

    Parameters
    ----------
    epsilon : float > 0
        The budget.
    delta : float in (0, 1)
    n_classes : int >= 2
        The size of the public label set.
    n_answers : int, default=800
        Answers the budget should buy.

    Returns
    -------
    n_teachers : int

    Examples
    --------
    >>> from skpate.recipes import teachers_for_budget
    >>> teachers_for_budget(1.0, 1e-5, n_classes=2), teachers_for_budget(0.5, 1e-5, n_classes=2)
    (262, 493)
    """
    epsilon = check_positive("epsilon", epsilon)
    check_positive_int("n_classes", n_classes, " (the size of the label set)", minimum=2)
    check_positive_int("n_answers", n_answers)
    return int(np.ceil(ensemble_noise_divisor(n_classes) * np.sqrt(2 * n_answers) / gdp_mu(epsilon, delta)))


def make_tabular_pate(
    preprocessor="passthrough", *, epsilon, classes, delta=1e-5, n_teachers="auto", max_answers=None,
    random_state=None, n_jobs=None, **params,
):  # fmt: skip
    """A budget-first ``PATEClassifier`` for tabular data: forest teachers, a smooth forest student.

    The recipe that did best on UCI Adult at publishable epsilon 0.5 to 4
    (``benchmarks/adult_sweep.py``, chosen on the evaluation half, i.e. with
    non-private tuning of a handful of settings):

    * teachers: random forests with ``max_features=None`` (the papers'
      teachers; 250 of them on 32,561 rows have a noise-free plurality of 85%);
    * student: a random forest whose leaves hold at least 5 rows, so that it
      averages noisy labels instead of memorising them (0.5 to 1 point above
      a fully grown forest at the same budget at epsilon 0.5 to 2, level at
      4; ``benchmarks/adult.py``, 3 seeds);
    * noise and queries: ``PATEClassifier``'s budget defaults, which are the
      rest of the recipe: GNMax at ``sigma = n_teachers / 1.75`` for two
      classes (:meth:`skpate.GNMax.for_ensemble`), as many queries as
      ``epsilon`` covers up to 2,000 (``max_answers``), then less noise
      instead; 5 rounds of uncertainty sampling (the student of each round
      picks the public rows it is least sure of; choosing rows from the
      student is post-processing of released labels and of public rows, so
      it costs nothing).

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
    n_teachers : int or "auto", default="auto"
        ``"auto"``: 250 teachers, or more when the budget would buy fewer
        than 800 answers with 250 (:func:`teachers_for_budget`; about 500
        at epsilon 0.5 for two classes). A function of ``epsilon``,
        ``delta`` and the number of classes: public.
    max_answers : int, default=None
        Above this many queries, the budget buys less noise instead of more
        queries (``GNMax.for_ensemble``); None: ``PATEClassifier``'s default,
        2,000 or the number of public rows if smaller. A public quantity.
    random_state : int, RandomState instance or None, default=None
    n_jobs : int, default=None
    **params
        Any other :class:`PATEClassifier` parameter (``n_rounds``,
        ``accountant``, ``max_queries``, ``warm_start``, ...).

    Returns
    -------
    pate : PATEClassifier
        Unfitted.

    Examples
    --------
    >>> from skpate.datasets import adult_encoder
    >>> from skpate.recipes import make_tabular_pate
    >>> pate = make_tabular_pate(adult_encoder(), epsilon=1.0, classes=["<=50K", ">50K"])
    >>> pate.student[-1], pate.epsilon
    (RandomForestClassifier(min_samples_leaf=5), 1.0)
    >>> round(pate.publishable_epsilon(n_public=8140), 3)  # the budget, known before the fit
    1.0
    """
    if isinstance(n_teachers, str) and n_teachers == "auto":
        n_teachers = max(250, teachers_for_budget(epsilon, delta, np.unique(classes).size))
    aggregator = None
    if max_answers is not None:
        aggregator = GNMax.for_ensemble(epsilon, delta, n_teachers, np.unique(classes).size, max_answers)
    teacher = make_pipeline(clone(preprocessor, safe=False), RandomForestClassifier(max_features=None))
    student = make_pipeline(clone(preprocessor, safe=False), RandomForestClassifier(min_samples_leaf=5))
    return PATEClassifier(
        teacher, n_teachers=n_teachers, aggregator=aggregator, student=student, epsilon=epsilon, delta=delta,
        classes=classes, random_state=random_state, n_jobs=n_jobs, **params,
    )  # fmt: skip
