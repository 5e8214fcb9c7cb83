"""Warnings and errors of skpate (at the bottom of the package, with ``_validation``: it imports nothing)."""

__all__ = ["PrivacyLeakWarning"]


class PrivacyLeakWarning(UserWarning):
    """A computation whose differential-privacy guarantee is void or weak.

    Raised, for instance, when an estimator takes its label set from the
    private labels (``classes=None``), or by :class:`~skpate.NZC` when its
    constant dominates the noise: the released label is then the
    deterministic plurality.
    """
