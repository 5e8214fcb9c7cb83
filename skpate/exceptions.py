"""Warnings and errors of skpate (at the bottom of the package, with ``_validation``: it imports nothing)."""

__all__ = ["PrivacyLeakWarning", "SeededNoiseWarning"]


class PrivacyLeakWarning(UserWarning):
    """A computation whose differential-privacy guarantee is void or weak.

    Raised, for instance, when an estimator takes its label set from the
    private labels (``classes=None``), or by :class:`~skpate.NZC` when its
    constant dominates the noise: the released label is then the
    deterministic plurality.
    """


class SeededNoiseWarning(UserWarning):
    """A private fit or release whose noise comes from a seed the caller chose.

    Issued once per top-level fit of a private estimator whose
    ``random_state`` is not None (an int, a ``RandomState`` or a
    ``Generator``), and by the functions that release noisy values
    (``aggregate``, ``noisy_votes``, ``sanitize``) when given a seed. The
    guarantee assumes the noise is secret: anyone who knows the seed
    regenerates it and subtracts it. Use ``random_state=None`` (fresh OS
    entropy) for a release; silence it for experiments and tests with
    ``warnings.filterwarnings("ignore", category=skpate.SeededNoiseWarning)``.
    """
