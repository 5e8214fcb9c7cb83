"""Private model selection: choosing one of several private fits by their accuracy on held-out private rows.

The selection of :class:`skpate.PrivateModelSelection` trains every candidate
on one part of the private rows and scores them on the other (the held-out
rows, assigned at random independently of the data). Its guarantee rests on
three facts, each a pure function here:

1. the score of a candidate, its number of correct predictions on the
   held-out rows, moves by at most one when one held-out row changes
   (:func:`held_out_score_sensitivity`);
2. the exponential mechanism on such scores is ``epsilon``-DP (McSherry &
   Talwar 2007, Thm. 6; Dwork & Roth 2014, Thm. 3.10):
   :func:`exponential_mechanism_probabilities`, :func:`exponential_mechanism`;
3. an ``epsilon``-DP mechanism is ``mu``-GDP when ``epsilon`` is at most
   :func:`gdp_pure_epsilon` of ``mu``, so a choice made at that epsilon costs
   nothing beyond the candidates' training when the rows are split: a row is
   either a training row (the choice is then post-processing of the
   candidates, [DRS22] Prop. 2.8) or a held-out row (the candidates are then
   the same on both datasets, and the choice alone is ``mu``-GDP). The whole
   selection is ``mu``-GDP, with ``mu^2`` the sum of the candidates' (parallel
   composition of a data-independent split; [DRS22] Cor. 3.3 for the
   candidates' sequential composition).

[DRS22] Dong, Roth, Su. "Gaussian Differential Privacy", JRSS B 2022.
"""

import numpy as np
from scipy.special import log_ndtr, log_softmax

from .sensitivity import check_neighboring

__all__ = [
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "gdp_pure_epsilon",
    "held_out_score_sensitivity",
]


def held_out_score_sensitivity(neighboring="replace-one"):
    """Sensitivity of every candidate's number of correct predictions on the held-out rows: 1.

    Proof: the candidates do not depend on the held-out rows, and each held-out
    row adds 0 or 1 to a candidate's count. Replacing a row changes its own
    term only (by at most 1); adding or removing it adds or removes that term.
    So each score moves by at most 1, under either relation.

    Parameters
    ----------
    neighboring : {"replace-one", "add-remove"}, default="replace-one"

    Returns
    -------
    sensitivity : float
    """
    check_neighboring(neighboring)
    return 1.0


def gdp_pure_epsilon(mu):
    """Largest ``epsilon`` such that every ``epsilon``-DP mechanism is ``mu``-GDP: ``log(Phi(mu/2) / Phi(-mu/2))``.

    Proof ([DRS22] Sec. 2): ``epsilon``-DP is ``f``-DP for the trade-off
    function ``f(a) = max(0, 1 - e^eps a, e^-eps (1 - a))`` ([DRS22] Prop. 2.5,
    Wasserman & Zhou 2010), and ``mu``-GDP is ``G_mu(a) = Phi(Phi^-1(1 - a) - mu)``-DP.
    ``f >= G_mu`` everywhere is what is needed (a mechanism that is ``f``-DP is
    then ``G_mu``-DP). Both are symmetric ([DRS22] Def. 2.4), so it suffices
    on ``[0, a*]`` with ``a* = 1 / (1 + e^eps)``, where ``f`` is the line from
    ``(0, 1)`` to ``(a*, a*)``. ``G_mu`` is convex with ``G_mu(0) = 1``, so it
    lies below that chord exactly when ``G_mu(a*) <= a*``, i.e. when ``a*`` is
    at least the fixed point ``Phi(-mu/2)`` of ``G_mu``: ``e^eps <= Phi(mu/2) /
    Phi(-mu/2)``. At a larger epsilon the point ``(a*, a*)`` of ``f`` lies
    below ``G_mu``, so the bound is tight (randomized response is its witness).

    Parameters
    ----------
    mu : array-like of float >= 0

    Returns
    -------
    epsilon : ndarray or float
        0 at ``mu = 0``, ``inf`` at ``mu = inf``; about ``0.8 mu`` for small ``mu``.
    """
    mu = np.asarray(mu, dtype=float)
    if np.any(np.isnan(mu)) or np.any(mu < 0):
        raise ValueError("mu must be >= 0.")
    with np.errstate(invalid="ignore"):
        out = np.where(np.isinf(mu), np.inf, log_ndtr(mu / 2.0) - log_ndtr(-mu / 2.0))
    return float(out) if out.ndim == 0 else out


def exponential_mechanism_probabilities(scores, epsilon, sensitivity=1.0):
    """Probabilities of the exponential mechanism: ``P(i) ~ exp(epsilon scores_i / (2 sensitivity))``.

    ``epsilon``-DP for scores of the given sensitivity (McSherry & Talwar 2007,
    Thm. 6; Dwork & Roth 2014, Thm. 3.10): a neighbour moves every score by at
    most ``sensitivity``, so each numerator moves by a factor of at most
    ``e^(epsilon/2)`` and the normaliser by at most the same factor.

    Parameters
    ----------
    scores : array-like of shape (..., n_candidates)
    epsilon : float > 0
    sensitivity : float > 0, default=1.0

    Returns
    -------
    probabilities : ndarray of the shape of ``scores``
    """
    scores = np.asarray(scores, dtype=float)
    if not (np.isfinite(epsilon) and epsilon > 0) or not (np.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError("epsilon and sensitivity must be positive finite numbers.")
    return np.exp(log_softmax(epsilon * scores / (2.0 * sensitivity), axis=-1))


def exponential_mechanism(scores, epsilon, rng, sensitivity=1.0):
    """One draw of the exponential mechanism: the index of the chosen candidate.

    The Gumbel-max form ``argmax(epsilon scores / (2 sensitivity) + Gumbel)``
    draws exactly from :func:`exponential_mechanism_probabilities`.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
    epsilon : float > 0
    rng : numpy.random.Generator
    sensitivity : float > 0, default=1.0

    Returns
    -------
    index : int
    """
    scores = np.asarray(scores, dtype=float)
    exponential_mechanism_probabilities(scores, epsilon, sensitivity)  # validates the arguments
    return int(np.argmax(epsilon * scores / (2.0 * sensitivity) + rng.gumbel(size=scores.shape)))
