"""Recipes: ``PATEClassifier`` configurations that won measured comparisons, as one call."""

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

from ._pate import PATEClassifier
from .aggregators import GaussianHistogram, GNMax, teachers_for_budget
from .privacy.cost import largest_count
from .refit import LeafRefitClassifier, gaussian_share_epsilon
from .students import VoteRegressionClassifier

__all__ = ["make_tabular_pate", "make_tabular_refit", "teachers_for_budget"]

#: ``make_tabular_pate(vote_regression="auto")`` regresses noisy histograms where the budget buys fewer hard-label
#: answers than this. On UCI Adult, 206 answers (epsilon 0.5): +0.4 point over 10 paired seeds (README); 733
#: (epsilon 1): -0.1, level within the spread.
#: Chosen between those two measured points on the evaluation half (non-private tuning, disclosed).
VOTE_REGRESSION_ANSWERS = 400


def make_tabular_pate(
    preprocessor="passthrough", *, epsilon, classes, delta=1e-5, n_teachers=250, max_answers=None,
    vote_regression="auto", random_state=None, n_jobs=None, **params,
):  # fmt: skip
    """A budget-first ``PATEClassifier`` for tabular data: forest teachers, a smooth forest student.

    The recipe that did best on UCI Adult at publishable epsilon 0.5 to 4
    (``benchmarks/adult_sweep.py``, chosen on the evaluation half, i.e. with
    non-private tuning of a handful of settings):

    * teachers: random forests with ``max_features=None`` (the papers'
      teachers; 250 of them on 32,561 rows have a noise-free plurality of 85%);
    * student: a random forest whose leaves hold at least 5 rows, so that it
      averages noisy labels instead of memorising them (0.2 to 0.5 point
      above a fully grown forest at the same budget at epsilon 0.5 to 2,
      level at 4; ``benchmarks/adult.py``, 10 seeds); where the budget buys
      few answers (``vote_regression="auto"``: fewer than 400), the whole
      noisy histograms instead (:class:`skpate.GaussianHistogram` at twice
      the noise, so four times the answers, at the same cost), regressed by
      a forest (:class:`skpate.students.VoteRegressionClassifier`): +0.4
      point at epsilon 0.5 over 10 paired seeds, and 0.1 to 0.4 *below*
      hard labels at epsilon 1 to 4, where it is therefore off;
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
    n_teachers : int or "auto", default=250
        ``"auto"``: more teachers where 250 would buy fewer than 800 answers
        (:func:`teachers_for_budget`, resolved in ``fit``). On Adult at
        epsilon 0.5 that (493 teachers) was level with 250, within the
        seeds' spread (README); on Fashion-MNIST at epsilon 1 it won 10
        points.
    max_answers : int, default=None
        Above this many queries, the budget buys less noise instead of more
        queries (``GNMax.for_ensemble``); None: ``PATEClassifier``'s default,
        2,000 or the number of public rows if smaller. A public quantity.
    vote_regression : bool or "auto", default="auto"
        Release the whole noisy vote histogram (:class:`skpate.GaussianHistogram`,
        the same cost as GNMax, twice its noise for four times the answers)
        and let the student regress it
        (:class:`skpate.students.VoteRegressionClassifier` around a forest
        with leaves of at least 10 rows) instead of learning hard labels.
        ``"auto"``: where the budget buys fewer than 400 hard-label answers
        (``VOTE_REGRESSION_ANSWERS``) at the recipe's GNMax noise, a function
        of ``epsilon``, ``delta``, ``n_teachers`` and the number of classes
        only. On Adult that is epsilon 0.5 (206 answers), where it won, and
        not 1 (733 answers) and above, where hard labels did as well or
        better (README).
    random_state : int, RandomState instance or None, default=None
    n_jobs : int, default=None
    **params
        Any other :class:`PATEClassifier` parameter (``n_rounds``,
        ``accountant``, ``max_queries``, ``warm_start``, ...).

    Returns
    -------
    pate : PATEClassifier
        Unfitted.

    See Also
    --------
    make_tabular_refit : This recipe under part of the budget, then private leaf refits; better on UCI Adult at
        every epsilon measured.

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
    if vote_regression not in (True, False, "auto"):
        raise ValueError(f'vote_regression must be True, False or "auto", got {vote_regression!r}.')
    teacher = make_pipeline(clone(preprocessor, safe=False), RandomForestClassifier(max_features=None))
    pate = PATEClassifier(
        teacher, n_teachers=n_teachers, epsilon=epsilon, delta=delta, classes=classes, random_state=random_state,
        n_jobs=n_jobs, **params,
    )  # fmt: skip
    n_classes = np.unique(classes).size
    n_teachers = pate.resolve_n_teachers(n_classes)  # the count the fit will train (public)
    if vote_regression == "auto":  # few answers: their margins are worth more than their argmax (public rule)
        noise = GNMax.for_ensemble(epsilon, delta, n_teachers, n_classes, max_answers)
        hard_answers = largest_count(noise.query_cost()[1], epsilon, delta, VOTE_REGRESSION_ANSWERS)
        vote_regression = hard_answers < VOTE_REGRESSION_ANSWERS
    final = VoteRegressionClassifier() if vote_regression else RandomForestClassifier(min_samples_leaf=5)
    pate.set_params(student=make_pipeline(clone(preprocessor, safe=False), final))
    if max_answers is not None:  # the noise is fixed before the fit, for the number of teachers the fit will train
        noise = GaussianHistogram if vote_regression else GNMax
        pate.set_params(
            n_teachers=n_teachers, aggregator=noise.for_ensemble(epsilon, delta, n_teachers, n_classes, max_answers)
        )
    return pate


def make_tabular_refit(
    preprocessor="passthrough", *, epsilon, classes, delta=1e-5, refit_share=0.7, n_rounds=3, random_state=None,
    n_jobs=None, **params,
):  # fmt: skip
    """The tabular recipe under part of the budget, then private leaf refits: a :class:`LeafRefitClassifier`.

    ``refit_share`` of the budget's Gaussian-DP ``mu^2`` goes to ``n_rounds``
    rounds of leaf counts (:class:`skpate.refit.LeafRefitClassifier`: 20-tree
    forests grown on the public rows, leaves of at least 20, the private rows'
    class counts per leaf released with Gaussian noise); the rest to
    :func:`make_tabular_pate`, configured for that smaller budget (its
    student, ``vote_regression="auto"``, follows it). Both parts are Gaussian
    DP, so they compose exactly to ``epsilon`` at ``delta``, fixed before the
    fit. On UCI Adult (``benchmarks/adult_refit.py``) this split and these
    rounds were chosen on the evaluation half (non-private tuning, disclosed).

    Parameters
    ----------
    preprocessor : transformer or "passthrough", default="passthrough"
        In front of every teacher and of the student, as in
        :func:`make_tabular_pate`, and the features the refit forests split
        on (fitted on the public rows).
    epsilon : float > 0
        The whole budget.
    classes : array-like
    delta : float in (0, 1), default=1e-5
    refit_share : float in (0, 1), default=0.7
    n_rounds : int, default=3
    random_state : int, RandomState instance or None, default=None
    n_jobs : int, default=None
    **params
        Passed to :func:`make_tabular_pate` (``n_teachers``, ``warm_start``, ...).

    Returns
    -------
    refit : LeafRefitClassifier
        Unfitted; ``refit.pate.epsilon`` is the whole budget.

    Examples
    --------
    >>> from skpate.datasets import adult_encoder
    >>> refit = make_tabular_refit(adult_encoder(), epsilon=1.0, classes=["<=50K", ">50K"])
    >>> refit.pate.epsilon, round(refit.pate_epsilon(n_public=8140), 3)  # the budget, the PATE part's share
    (1.0, 0.518)
    """
    if not 0 < refit_share < 1:
        raise ValueError(f"refit_share must be in (0, 1), got {refit_share!r}.")
    part = gaussian_share_epsilon(epsilon, delta, 1.0 - refit_share)  # what LeafRefitClassifier gives pate
    pate = make_tabular_pate(
        preprocessor, epsilon=part, classes=classes, delta=delta, random_state=random_state, n_jobs=n_jobs, **params
    )  # fmt: skip
    return LeafRefitClassifier(
        pate.set_params(epsilon=epsilon), preprocessor=clone(preprocessor, safe=False), refit_share=refit_share,
        n_rounds=n_rounds, random_state=random_state,
    )  # fmt: skip
