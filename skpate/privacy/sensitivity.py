"""Sensitivities of the mechanisms of the learners without teachers, one pure function each, with its proof.

The sensitivity of a release is the most one private row can move it, in L2
norm, between neighbouring datasets. The relation is a library-wide choice,
named by the estimators' ``neighboring`` parameter:

* ``"replace-one"`` (skpate's default, as for PATE): the datasets differ in
  the content of one row; their size is the same, so it is public;
* ``"add-remove"`` (Opacus's): one dataset has one row more. A replacement is
  a removal and an addition, so a guarantee under "replace-one" at the same
  epsilon is the stronger of the two.

A Gaussian release of L2 sensitivity ``D`` at noise ``sigma`` is
``D / sigma``-GDP ([DRS22] Thm. 2.7). PATE's vote histograms (one teacher moves
one vote: L2 ``sqrt(2)``) are argued in :mod:`skpate.privacy.bounds` and
:mod:`skpate.privacy.cost`.

[DRS22] Dong, Roth, Su. "Gaussian Differential Privacy", JRSS B 2022.
"""

import numpy as np

__all__ = [
    "NEIGHBORING",
    "binned_sum_sensitivity",
    "check_neighboring",
    "clipped_sum_sensitivity",
    "count_sensitivity",
    "count_tables_sensitivity",
]

#: The neighbouring relations an estimator may offer.
NEIGHBORING = ("replace-one", "add-remove")


def check_neighboring(neighboring):
    """``neighboring`` if it is one of :data:`NEIGHBORING`; else a ValueError that names both."""
    if neighboring not in NEIGHBORING:
        raise ValueError(f"neighboring must be 'replace-one' or 'add-remove', got {neighboring!r}.")
    return neighboring


def count_tables_sensitivity(n_partitions, neighboring="replace-one"):
    """L2 sensitivity of ``n_partitions`` tables of class counts per cell, each row in one cell of each table.

    Proof: each partition puts a row in exactly one cell, and the row adds 1
    to one (cell, class) count there. Replacing the row takes 1 from one count
    and adds 1 to another (possibly the same) in each of the ``T`` tables: the
    change has at most ``2 T`` entries of size 1, L2 norm ``sqrt(2 T)``.
    Adding or removing the row changes one count per table: ``sqrt(T)``.

    Parameters
    ----------
    n_partitions : int or array-like of int
        Tables released together (trees of a forest, k-means partitions).
    neighboring : {"replace-one", "add-remove"}, default="replace-one"

    Returns
    -------
    sensitivity : float or ndarray
    """
    changed = 2.0 if check_neighboring(neighboring) == "replace-one" else 1.0
    return np.sqrt(changed * np.asarray(n_partitions, dtype=float))


def clipped_sum_sensitivity(clip, neighboring="replace-one"):
    """L2 sensitivity of a sum of per-row vectors, each clipped to L2 norm ``clip`` (e.g. gradients).

    Proof: adding or removing one row adds or removes one term of norm at most
    ``clip``; replacing it swaps one such term for another, a change of norm
    at most ``2 clip`` by the triangle inequality (attained by opposite terms).
    Every other term is a function of its own row and the released state only.

    Parameters
    ----------
    clip : float or array-like of float
    neighboring : {"replace-one", "add-remove"}, default="replace-one"

    Returns
    -------
    sensitivity : float or ndarray
    """
    factor = 2.0 if check_neighboring(neighboring) == "replace-one" else 1.0
    return factor * np.asarray(clip, dtype=float)


def count_sensitivity(neighboring="add-remove"):
    """Sensitivity of the number of private rows: 1 under "add-remove", 0 under "replace-one".

    Proof: adding or removing one row moves the count by exactly one;
    replacing it leaves the count unchanged, so it is public.
    """
    return 1.0 if check_neighboring(neighboring) == "add-remove" else 0.0


def binned_sum_sensitivity(clip, neighboring="replace-one"):
    """L2 sensitivity of a table of per-bin sums of per-row vectors clipped to L2 norm ``clip``, bins fixed without
    the private rows: one round of a boosted additive model (the bins of one feature cut at public values).

    Proof: the bins are a function of public rows and earlier releases, so each private row falls in exactly one
    bin, and every other row's vector depends on its own row and the released state only. Replacing the row's
    vector ``g`` (in bin ``a``) by ``g'`` (in bin ``b``) moves rows ``a`` and ``b`` of the table only: if
    ``a == b``, row ``a`` moves by ``g' - g``, of norm at most ``||g'|| + ||g|| <= 2 clip`` (attained by the same
    features relabelled, ``g' = -g``); if ``a != b``, row ``a`` moves by ``-g`` and row ``b`` by ``g'``, together
    ``sqrt(||g||^2 + ||g'||^2) <= sqrt(2) clip``. The larger is ``2 clip``: binning adds nothing to the sensitivity
    of one clipped sum (:func:`clipped_sum_sensitivity`). Adding or removing the row moves one bin by at most
    ``clip``.

    Parameters
    ----------
    clip : float or array-like of float
    neighboring : {"replace-one", "add-remove"}, default="replace-one"

    Returns
    -------
    sensitivity : float or ndarray
    """
    return clipped_sum_sensitivity(clip, neighboring)
