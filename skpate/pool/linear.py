"""Private softmax regression by noisy full-batch gradient descent, shaped by the public pool.

The public pool has no labels, but its features are free: they fix a feature
map (a preprocessor fitted on them, e.g. a scaler and a whitening PCA), the
radius to which every row is scaled, and a preconditioner (their Gram matrix),
so the private rows are only touched by the gradients. Each of ``T`` steps
releases the sum of the private rows' gradients, each clipped to norm ``C``,
plus Gaussian noise. Replacing one private row changes that sum by at most
``2 C`` in L2 norm, so the step at noise ``sigma`` is ``2 C / sigma``-GDP
([DRS22] Thm. 2.7), and the ``T`` adaptively chosen steps compose to
``2 C sqrt(T) / sigma``-GDP ([DRS22] Cor. 3.3). ``sigma`` is set from the
budget before the fit, so the published epsilon is a priori. The number of
private rows, by which the sum is divided, is public under replacement
adjacency; under adding or removing a row (Opacus's relation, an option) the
sum moves by at most ``C`` and the count is released once with noise.
"""

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_array
from sklearn.utils._param_validation import HasMethods, StrOptions

from .._validation import Count, RealRange
from ..base import PublishedModelMixin
from ..preprocessing import PublicPreprocessor
from ..privacy.calibration import gradient_sigma, private_budget_split
from ..privacy.gdp import gdp_mu
from ._base import BasePoolClassifier, private_features, private_matrix
from ._logits import LogitsModelMixin, PredictsWithModelMixin

__all__ = ["NoisyGDClassifier", "SoftmaxModel", "clipped_gradient", "in_unit_ball", "row_norms"]

#: The largest constant feature: its square enters the public rows' Gram matrix, which 1e300 overflowed.
MAX_INTERCEPT_SCALING = 1e6


def _scaled_norms(Z):
    """``(scale, unit)`` per row of ``Z`` (dense or sparse): its largest absolute value (1 for a zero row) and the
    norm of the row divided by it, so that ``scale * unit`` is its norm and neither overflows."""
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z)
        scale = np.asarray(abs(Z).max(axis=1).todense(), dtype=np.float64).ravel()
        safe = np.where(scale > 0, scale, 1.0)
        scaled = sp.diags(1.0 / safe) @ Z
        return safe, np.sqrt(np.asarray(scaled.multiply(scaled).sum(axis=1), dtype=np.float64).ravel())
    Z = np.asarray(Z, dtype=np.float64)
    if Z.shape[1] == 0:
        return np.ones(Z.shape[0]), np.zeros(Z.shape[0])
    scale = np.max(np.abs(Z), axis=1)
    safe = np.where(scale > 0, scale, 1.0)
    return safe, np.linalg.norm(Z / safe[:, None], axis=1)


def row_norms(Z):
    """Euclidean norm of every row of ``Z`` (dense or sparse), without overflow in the sum of squares.

    Each row is divided by its largest absolute value before its squares are summed, so a feature of 1e300
    gives the norm 1e300, not infinity (a norm beyond float64's range is infinity, without a warning).
    """
    scale, unit = _scaled_norms(Z)
    with np.errstate(over="ignore"):
        return scale * unit


def clipped_gradient(A, W, codes, clip, a_norms=None):
    """Sum over rows of the softmax cross-entropy gradients ``a (p - e_y)^T``, each clipped to Frobenius norm ``clip``.

    The norm of the outer product is ``||a|| ||p - e_y||``, so clipping scales the residuals. ``A`` may be
    sparse; ``a_norms`` (its :func:`row_norms`, which do not change between steps) is computed if not given.
    """
    residual = softmax(A @ W, axis=1)
    residual[np.arange(len(codes)), codes] -= 1.0
    a_norms = row_norms(A) if a_norms is None else a_norms
    norms = a_norms * np.linalg.norm(residual, axis=1)
    over = norms > clip
    residual[over] *= (clip / norms[over])[:, None]
    return A.T @ residual


class NoisyGDClassifier(PredictsWithModelMixin, BasePoolClassifier):
    """Softmax regression on the private rows by noisy gradient descent, preconditioned by the public rows.

    No teachers: the public rows (features only) fit ``preprocessor``, the
    radius ``R`` (the ``norm_quantile`` of their norms after it) and the
    preconditioner ``(A_pub^T A_pub / m + alpha I)^-1``, all free. Every row
    ``z`` becomes ``a = [z min(1, R / ||z||) / R, intercept_scaling]``. From
    ``W = 0``, each of ``n_iter`` steps computes the private rows' softmax
    gradients, clips each to norm ``clip``, adds ``N(0, sigma^2)`` to their sum
    and moves ``W`` by ``-learning_rate`` times the preconditioned noisy mean.
    ``sigma = 2 clip sqrt(n_iter) / mu`` with ``mu`` the Gaussian-DP parameter
    of the budget ``(epsilon, delta)`` ([DRS22] Thm. 2.7, Cor. 3.3, 2.13;
    replacing one private row; see ``neighboring`` for adding or removing one):
    ``privacy_spent_`` is the budget, fixed before the fit.

    It is DP gradient descent, not PATE; what the public pool buys is a
    feature space and a step geometry that cost no privacy. Its comparison
    with the DP-SGD linear layer on the same Fashion-MNIST scattering
    features is in ``docs/benchmarks/fashion_mnist.md``.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        The budget, fixed before the fit.
    delta : float in (0, 1), default=1e-5
    classes : array-like, default=None
        The public label set. None takes it from the private labels with a
        :class:`~skpate.PrivacyLeakWarning` (the label set is then published).
    accountant : skpate.privacy.RDPAccountant or PrivacyLedger, default=None
        Budget shared across fits: the fit reserves ``epsilon`` with it before
        reading a private row, and is refused if it does not fit.
    preprocessor : "auto", "passthrough" or transformer, default="auto"
        Fitted on the public rows only. ``"auto"``:
        :class:`~skpate.preprocessing.PublicPreprocessor` (categories one-hot,
        missing values imputed, numbers clipped to the public range; every
        private row has an encoding) followed by a ``StandardScaler``. A
        whitening PCA (``make_pipeline(StandardScaler(), PCA(k, whiten=True))``)
        suits many correlated features: fewer dimensions, less noise. Its
        output may be sparse (e.g. one-hot columns); it must be finite.
        A step with ``handle_unknown="error"`` is refused before the fit (a
        private category the public rows never showed would fail it, quoted);
        a failure on the private rows is a ``ValueError`` that quotes none.
    n_iter : int >= 1, default=50
        Gradient steps; the noise of each grows as ``sqrt(n_iter)``.
    learning_rate : float > 0, default=1.0
    clip : float > 0, default=0.5
        Bound on each private row's gradient norm (rows have norm at most
        ``sqrt(1 + intercept_scaling^2)``, residuals ``sqrt(2)``).
    intercept_scaling : float in [0, 1e6], default=1.0
        The constant feature appended to every row (rows are in the unit
        ball: past a million, the public Gram matrix overflows).
    norm_quantile : float in (0, 1], default=0.5
        Quantile of the public rows' norms used as the radius ``R``.
    alpha : float > 0, default=1e-3
        Ridge added to the public Gram matrix before it is inverted.
    neighboring : {"replace-one", "add-remove"}, default="replace-one"
        What the epsilon protects: replacing one private row (skpate's relation, as for PATE; the
        gradient sum moves by ``2 clip``, the number of rows is public) or adding or removing one
        (Opacus's; the sum moves by ``clip``, so half the noise, and the number of rows is released
        once with Gaussian noise at 1% of the budget's ``mu^2``). Replacement is an addition and a
        removal, so the same epsilon is a stronger guarantee under "replace-one". Under
        "add-remove" nothing else reads the number of rows: with public ``classes``, no private rows
        at all fit as one does, and the ``delta >= 1/n`` warning is not given (choose ``delta`` well
        below ``1/n``).
    random_state : int, RandomState instance or None, default=None
        Seeds the noise. None (default) draws from OS entropy; a seed makes
        the noise reproducible by anyone who knows it
        (:class:`~skpate.SeededNoiseWarning`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    preprocessor_ : transformer or None
        Fitted on the public rows.
    radius_ : float
        ``R``, from the public rows.
    coef_ : ndarray of shape (n_classes, n_features_out)
        Weights of the scaled features.
    intercept_ : ndarray of shape (n_classes,)
    sigma_ : float
        Noise of every coordinate of every gradient sum.
    model_ : SoftmaxModel
        The publishable model (see :meth:`export_model`).
    privacy_spent_ : tuple of (float, float)
    privacy_report_ : skpate.PrivacyReport

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 5)); y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> from skpate import NoisyGDClassifier
    >>> gd = NoisyGDClassifier(epsilon=1.0, classes=[0, 1], random_state=0)
    >>> gd.fit(X[:2000], y[:2000], X_public=X[2000:2500]).score(X[2500:], y[2500:]) > 0.9  # private, public, new
    True
    >>> gd.privacy_spent_
    (1.0, 1e-05)
    """

    _parameter_constraints = {
        **BasePoolClassifier._parameter_constraints,
        "preprocessor": [StrOptions({"auto", "passthrough"}), HasMethods(["fit", "transform"])],
        "n_iter": [Count(1)],
        "learning_rate": [RealRange(0, None, closed="neither")],
        "clip": [RealRange(0, None, closed="neither")],
        "intercept_scaling": [RealRange(0, MAX_INTERCEPT_SCALING, closed="both")],
        "norm_quantile": [RealRange(0, 1, closed="right")],
        "alpha": [RealRange(0, None, closed="neither")],
        "neighboring": [StrOptions({"replace-one", "add-remove"})],
    }

    def __init__(
        self, *, epsilon=1.0, delta=1e-5, classes=None, accountant=None, preprocessor="auto", n_iter=50,
        learning_rate=1.0, clip=0.5, intercept_scaling=1.0, norm_quantile=0.5, alpha=1e-3, neighboring="replace-one",
        random_state=None,
    ):  # fmt: skip
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.accountant = accountant
        self.preprocessor = preprocessor
        self.n_iter = n_iter
        self.learning_rate = learning_rate
        self.clip = clip
        self.intercept_scaling = intercept_scaling
        self.norm_quantile = norm_quantile
        self.alpha = alpha
        self.neighboring = neighboring
        self.random_state = random_state

    def _preprocessor(self):
        if self._preprocessor_is("auto"):  # accepts every private row: a refusal would depend on one
            return make_pipeline(PublicPreprocessor(), StandardScaler())
        return self.preprocessor

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self._preprocessor_is("passthrough"):  # the steps take CSR rows
            tags.input_tags.sparse = True
        return tags

    def _fit_public(self, X_public, name):
        """The base's ``(preprocessor, Z_public)`` and the public rows' ``norm_quantile`` norm (the radius)."""
        preprocessor, Z_public = super()._fit_public(X_public, name)  # dense or CSR (one-hot): both work below
        radius = float(np.quantile(row_norms(Z_public), float(self.norm_quantile)))
        if not radius > 0:
            raise ValueError(
                f"the norm_quantile={self.norm_quantile} quantile of the public rows' norms (after the preprocessor) "
                "is 0; raise norm_quantile or pass public rows that are not all zero."
            )
        return preprocessor, Z_public, radius

    def _fit_pool(self, X_private, y_private, X_public, public, classes, rng, plan):
        codes = np.searchsorted(classes, y_private)  # check_classes checked that every label is in classes
        name = type(self).__name__
        self.preprocessor_, Z_public, self.radius_ = public
        Z_private = private_features(self.preprocessor_, X_private, Z_public, name)
        A_public, A = self._design(Z_public), self._design(private_matrix(Z_private, name))
        gram = A_public.T @ A_public
        gram = (gram.toarray() if sp.issparse(gram) else gram) / A_public.shape[0] + float(self.alpha) * np.eye(
            A.shape[1]
        )
        preconditioner = cho_factor(gram)  # public: free
        steps_mu, count_sigma = private_budget_split(float(gdp_mu(self.epsilon, self.delta)), self.neighboring)
        clip, learning_rate = float(self.clip), float(self.learning_rate)  # a Fraction or float16 computes alike
        self.sigma_ = gradient_sigma(clip, self.n_iter, steps_mu, self.neighboring)
        # The mean's denominator: public under replacement; a noisy count (at least 1) under add/remove.
        n_rows = A.shape[0] if count_sigma is None else max(1.0, A.shape[0] + rng.normal(0.0, count_sigma))
        W = np.zeros((A.shape[1], classes.size))
        a_norms = row_norms(A)
        for _ in range(self.n_iter):
            noisy = clipped_gradient(A, W, codes, clip, a_norms) + rng.normal(0.0, self.sigma_, W.shape)
            W -= learning_rate * cho_solve(preconditioner, noisy / n_rows)
        self.coef_, self.intercept_ = W[:-1].T.copy(), W[-1] * float(self.intercept_scaling)
        self.model_ = SoftmaxModel(self.preprocessor_, self.radius_, self.coef_, self.intercept_, classes)

    def _mechanism(self):
        return (
            f"noisy gradient descent, {self.n_iter} steps of clipped gradient sums (clip={float(self.clip):g}, "
            f"sigma={self.sigma_:.4g})"
        )

    def _design(self, Z):
        """Rows in the unit ball with the intercept column appended: what the gradient steps see (CSR if ``Z`` is)."""
        intercept = np.full((Z.shape[0], 1), float(self.intercept_scaling))
        if sp.issparse(Z):
            return sp.hstack([in_unit_ball(Z, self.radius_), sp.csr_matrix(intercept)], format="csr")
        return np.hstack([in_unit_ball(Z, self.radius_), intercept])


def in_unit_ball(Z, radius):
    """Rows scaled into the unit ball at ``radius``: ``z min(1, radius / ||z||) / radius`` (``Z`` dense or sparse).

    A row whose norm exceeds float64's range is divided by its largest value, then by its norm after that
    (:func:`_scaled_norms`): it keeps its direction on the sphere instead of becoming 0, without a warning.
    """
    scale, unit = _scaled_norms(Z)
    with np.errstate(over="ignore"):
        divisor = np.maximum(scale * unit, radius)
    huge = ~np.isfinite(divisor)
    multiplier = np.where(huge, (1.0 / scale) / np.where(huge, unit, 1.0), 1.0 / divisor)
    if sp.issparse(Z):
        return sp.csr_matrix(sp.diags(multiplier) @ Z)
    scaled = np.asarray(Z, dtype=np.float64) / divisor[:, None]
    scaled[huge] = Z[huge] * multiplier[huge, None]
    return scaled


class SoftmaxModel(LogitsModelMixin, PublishedModelMixin, ClassifierMixin, BaseEstimator):
    """A softmax regression on a public feature map: what :class:`NoisyGDClassifier` publishes.

    Not fitted by itself: built from the fitted preprocessor (or None), the
    radius, the noisy weights and the label set.

    Parameters
    ----------
    preprocessor : fitted transformer or None
    radius : float
    coef : ndarray of shape (n_classes, n_features_out)
    intercept : ndarray of shape (n_classes,)
    classes : ndarray of shape (n_classes,)
    """

    def __init__(self, preprocessor, radius, coef, intercept, classes):
        self.preprocessor = preprocessor
        self.radius = radius
        self.coef = coef
        self.intercept = intercept
        self.classes = classes

    def logits(self, X):
        """Class scores of the rows, shape ``(n_samples, n_classes)``."""
        # A one-hot encoder's output may be sparse.
        Z = check_array(self._features(X), accept_sparse="csr", dtype=np.float64)
        return np.asarray(in_unit_ball(Z, self.radius) @ self.coef.T) + self.intercept
