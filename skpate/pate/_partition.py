"""Disjoint partitions of the private rows, one per teacher.

PATE's analysis needs one privacy unit (a record, or a user with ``groups``)
to influence one teacher only. How rows are assigned decides which
neighbouring relation that holds for:

* rows: a seeded random permutation cut into ``n_teachers`` near-equal
  chunks. Replacing one record (the papers' neighbouring relation: same
  number of rows) changes one teacher's data only.
* groups: each group is sent to a teacher by a seeded hash of its label,
  independently of every other group, so adding or removing a whole user,
  or changing any of a user's rows, changes one teacher's data only (a
  balanced split by group sizes would move other users between teachers).
  Replacing one user by another (a different label) can change two
  teachers, the one the first user hashes to and the new user's: that is
  two neighbouring steps (group privacy, ``2 mu`` in Gaussian DP).

The assignment never looks at the labels: stratifying by class would make one
record's label move other records between teachers.
"""

import numpy as np
import pandas as pd


def disjoint_partitions(n_samples, n_teachers, rng, groups=None):
    """Split ``range(n_samples)`` into ``n_teachers`` disjoint index arrays.

    Parameters
    ----------
    n_samples : int
        Number of private rows.
    n_teachers : int
    rng : numpy.random.Generator
    groups : array-like of shape (n_samples,), optional
        Privacy unit of each row (e.g. a user id); all rows of a group land in
        the same partition.

    Returns
    -------
    partitions : list of ndarray of int
        Sorted row indices of each teacher; together they cover every row once.

    Raises
    ------
    ValueError
        If ``n_teachers`` exceeds the rows (or groups), or a partition is empty.
    """
    if groups is None:
        if n_teachers > n_samples:
            raise ValueError(
                f"n_teachers={n_teachers} exceeds the number of private (labeled) rows ({n_samples}); "
                "every teacher needs its own rows: lower n_teachers or add private data."
            )
        return [np.sort(part) for part in np.array_split(rng.permutation(n_samples), n_teachers)]

    groups = np.asarray(groups)
    if groups.shape != (n_samples,):
        raise ValueError("groups must have one entry per private row (a 1-d array); the count is not shown.")
    n_groups = len(pd.unique(groups))
    if n_teachers > n_groups:
        raise ValueError(
            f"n_teachers={n_teachers} exceeds the number of groups among the private rows; each group goes to "
            "one teacher: lower n_teachers (the number of groups is not shown: with groups, it is private)."
        )
    # A keyed hash of the label: the group's teacher depends on nothing else.
    key = "".join(f"{b:02x}" for b in rng.integers(0, 256, size=8))
    # (pandas keys only the hash of strings, so labels are hashed as text.)
    labels = groups.astype(str).astype(object)
    teacher_of_row = pd.util.hash_array(labels, hash_key=key, categorize=True) % np.uint64(n_teachers)
    order = np.argsort(teacher_of_row, kind="stable")
    counts = np.bincount(teacher_of_row.astype(np.int64), minlength=n_teachers)
    if np.any(counts == 0):
        raise ValueError(
            f"some of the n_teachers={n_teachers} partitions received no group (groups are hashed to teachers at "
            "random): lower n_teachers, e.g. to a twentieth of the number of groups."
        )
    return np.split(order, np.cumsum(counts)[:-1])
