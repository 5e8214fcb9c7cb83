"""Differentially private peers of skpate, as estimators the harness loop fits like skpate's own.

Every peer trains on the private rows only (the public pool, where it is
used at all, gives free statistics such as a feature scale) and is scored on
the same evaluation rows as skpate, at the same delta. Each has
``epsilon``, ``delta``, ``random_state``, ``fit(X, y, X_public=None)``,
``score`` and, after the fit, ``privacy_spent_ = (epsilon, delta)`` (the
a-priori guarantee its noise is calibrated to), ``spent_epsilon_`` (its
accountant's epsilon after training, at most ``epsilon``) and
``noise_multiplier_``.

Peers
-----
:class:`AdultDPSGD`
    Opacus DP-SGD of a linear layer (logistic regression) or of a 64-unit
    tanh MLP on UCI Adult's schema features (:func:`schema_features`: the
    published schema only, so the encoding costs no privacy).
:class:`AdultDiffprivlib`
    diffprivlib's objective-perturbation logistic regression (pure
    epsilon-DP; diffprivlib pins an older scikit-learn, so it is imported
    lazily and may be missing).
:class:`FashionCNNDPSGD`
    The tanh CNN of Papernot et al. 2021 on Fashion-MNIST pixels.
:class:`ScatteringLinearDPSGD`
    DP-SGD of a linear layer on Fashion-MNIST scattering features (Tramer &
    Boneh 2021), standardized with the public pool's mean and std (free).

DP-SGD here is Opacus with Poisson sampling at rate 1 / (number of batches),
flat clipping, plain SGD, the noise multiplier calibrated a priori. Its
epsilon is for **add/remove** adjacency (Opacus's PRV accountant) with
``neighboring="add-remove"``; skpate's guarantee is for **replacing** one
record, which ``neighboring="replace-one"`` calibrates with dp-accounting's
privacy loss distributions (:func:`replace_one_noise`): about twice the noise
for the same epsilon. The hyperparameters were tuned lightly and
non-privately on the evaluation rows (disclosed; the tuning's own cost is not
accounted): see docs/benchmarks/adult.md and docs/benchmarks/fashion_mnist.md.

Nothing here imports torch, Opacus, dp-accounting or diffprivlib at import
time: skpate's tests import the benchmarks without them.
"""

import contextlib
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.preprocessing import FunctionTransformer

from .harness import ADULT_CLASSES, DELTA, FASHION_CLASSES

#: (low, high, log) per numeric Adult column: fixed bounds from the schema and common knowledge, never from rows.
#: Values are clipped to [low, high], then mapped to [0, 1] (after log1p where ``log``).
NUMERIC_BOUNDS = {
    "age": (17, 90, False),  # adult.names: people of 16+; the census top-codes age at 90
    "fnlwgt": (1e4, 1.5e6, True),  # CPS sampling weights
    "education-num": (1, 16, False),  # the 16 education levels
    "capital-gain": (0, 99999, True),  # 99999 is the census top code
    "capital-loss": (0, 4356, True),
    "hours-per-week": (1, 99, False),  # 99 is the top code
}

#: Opacus settings of the Adult peers: expected batch 1024, 30 epochs, clip 1, PRV accountant; lr per model.
ADULT_DPSGD = {"batch_size": 1024, "epochs": 30, "max_grad_norm": 1.0, "accountant": "prv"}
#: SGD learning rates of the Adult linear model and MLP.
ADULT_LR = {"logistic": 2.0, "mlp": 1.0}
#: Inverse L2 regularization of diffprivlib's logistic regression.
DIFFPRIVLIB_C = 0.01
#: Opacus settings of the Fashion-MNIST tanh CNN.
CNN_DPSGD = {"batch_size": 1024, "epochs": 10, "max_grad_norm": 0.1, "lr": 64.0, "accountant": "prv"}
#: Opacus settings of the linear layer on scattering features (lr: see :class:`ScatteringLinearDPSGD`).
LINEAR_DPSGD = {"batch_size": 2048, "epochs": 20, "max_grad_norm": 0.1, "lr": 64.0, "accountant": "prv"}
#: torch threads during a DP-SGD fit (restored after): small batches gain little from a second thread.
TORCH_THREADS = 1


# ---------------------------------------------------------------------------------------------------- accounting


def replace_one_epsilon(noise_multiplier, sample_rate, steps, delta):
    """Epsilon of Poisson-sampled DP-SGD when neighbours differ by replacing one record (dp-accounting PLD).

    Parameters
    ----------
    noise_multiplier, sample_rate : float
    steps : int
    delta : float

    Returns
    -------
    epsilon : float
    """
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    accountant = PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    event = dp_accounting.PoissonSampledDpEvent(sample_rate, dp_accounting.GaussianDpEvent(noise_multiplier))
    return accountant.compose(event, steps).get_epsilon(delta)


def replace_one_noise(epsilon, delta, sample_rate, steps):
    """Smallest noise multiplier (to 0.1%) whose :func:`replace_one_epsilon` is at most ``epsilon``.

    Parameters
    ----------
    epsilon, delta, sample_rate : float
    steps : int

    Returns
    -------
    noise_multiplier : float
    """
    from scipy.optimize import brentq

    def excess(log_noise):
        return replace_one_epsilon(np.exp(log_noise), sample_rate, steps, delta) - epsilon

    noise = np.exp(brentq(excess, np.log(0.3), np.log(300.0), xtol=1e-4))
    while replace_one_epsilon(noise, sample_rate, steps, delta) > epsilon:  # the root may sit a hair low
        noise *= 1.001
    return float(noise)


@contextlib.contextmanager
def _torch_threads(n_threads):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n_threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train_dpsgd(module_fn, inputs, targets, loss_fn, epsilon, delta, seed, batch_size, epochs, max_grad_norm, lr,
                accountant, neighboring="add-remove", threads=TORCH_THREADS):  # fmt: skip
    """Train ``module_fn()`` with Opacus DP-SGD at (epsilon, delta), the noise calibrated a priori.

    Parameters
    ----------
    module_fn : callable
        Returns a fresh ``torch.nn.Module``.
    inputs, targets : torch.Tensor
    loss_fn : callable
        ``loss_fn(outputs, targets)``.
    epsilon, delta : float
        The target guarantee.
    seed : int
        Seeds the weights, the sampling and the noise; torch's global RNG and thread count are restored after.
    batch_size, epochs, max_grad_norm, lr : float
    accountant : str
        Opacus's accountant for ``"add-remove"``.
    neighboring : {"add-remove", "replace-one"}, default="add-remove"
    threads : int, default=TORCH_THREADS

    Returns
    -------
    module : torch.nn.Module
        In eval mode.
    spent_epsilon : float
    noise_multiplier : float

    Raises
    ------
    RuntimeError
        If the accountant's epsilon after training exceeds the target.
    """
    import torch
    from opacus import PrivacyEngine

    if neighboring not in ("add-remove", "replace-one"):
        raise ValueError(f"neighboring must be 'add-remove' or 'replace-one', got {neighboring!r}.")
    with torch.random.fork_rng(), warnings.catch_warnings(), _torch_threads(threads):
        warnings.filterwarnings("ignore", message=".*[Ss]ecure RNG.*")  # an experiment, not a deployment
        warnings.filterwarnings("ignore", message="Full backward hook is firing")  # Opacus's hooks: harmless
        warnings.filterwarnings("ignore", message="Optimal order is the largest alpha")  # PRV's RDP domain bound
        torch.manual_seed(seed)
        module = module_fn()
        loader = torch.utils.data.DataLoader(
            _rows(inputs, targets), batch_size=batch_size, generator=torch.Generator().manual_seed(2 * seed),
            collate_fn=_as_is,
        )  # fmt: skip
        engine = PrivacyEngine(accountant=accountant)
        private = dict(
            module=module, optimizer=torch.optim.SGD(module.parameters(), lr=lr), data_loader=loader,
            max_grad_norm=max_grad_norm, noise_generator=torch.Generator().manual_seed(2 * seed + 1),
        )  # fmt: skip
        sample_rate, steps = 1 / len(loader), epochs * len(loader)
        if neighboring == "replace-one":
            noise = replace_one_noise(epsilon, delta, sample_rate, steps)
            private_module, optimizer, private_loader = engine.make_private(noise_multiplier=noise, **private)
        else:
            private_module, optimizer, private_loader = engine.make_private_with_epsilon(
                target_epsilon=epsilon, target_delta=delta, epochs=epochs, **private
            )
        private_module.train()
        for _ in range(epochs):
            for xb, yb in private_loader:
                optimizer.zero_grad()
                loss_fn(private_module(xb), yb).backward()
                optimizer.step()
        if neighboring == "replace-one":
            spent = replace_one_epsilon(optimizer.noise_multiplier, sample_rate, steps, delta)
        else:
            spent = engine.get_epsilon(delta)
    if spent > epsilon * 1.001:  # the a-priori calibration must hold; 0.1% slack for the accountant's grid
        raise RuntimeError(f"DP-SGD spent epsilon {spent:.4f} > target {epsilon}")
    module.eval()
    return module, spent, optimizer.noise_multiplier


def _rows(*tensors):
    import torch

    class Rows(torch.utils.data.TensorDataset):
        # One indexing op per batch: the default fetches and collates row by row, which dominated the fit time.
        def __getitems__(self, indices):
            return [tensor[indices] for tensor in self.tensors]

    return Rows(*tensors)


def _as_is(batch):
    return batch


# ---------------------------------------------------------------------------------------------------- UCI Adult


def schema_features(X):
    """Encode Adult rows with the published schema only.

    Parameters
    ----------
    X : pandas.DataFrame
        The 14 attributes, as :func:`skpate.datasets.adult_papers_split` returns them.

    Returns
    -------
    features : ndarray of shape (n_rows, 105), float32
        One-hot of each categorical with the categories of
        :data:`skpate.datasets.ADULT_CATEGORIES` (missing or unknown values are
        all zeros), then the numeric columns clipped to :data:`NUMERIC_BOUNDS`
        and scaled to [0, 1]. Every row has L2 norm at most :func:`data_norm`.
    """
    from skpate.datasets import ADULT_CATEGORIES

    blocks = []
    for column, categories in ADULT_CATEGORIES.items():
        values = X[column].to_numpy(dtype=object)
        blocks.append(values[:, None] == np.asarray(categories, dtype=object)[None, :])  # NaN: all zeros
    for column, (low, high, log) in NUMERIC_BOUNDS.items():
        values = np.clip(X[column].to_numpy(dtype=np.float64), low, high)
        if log:
            values, low, high = np.log1p(values), np.log1p(low), np.log1p(high)
        blocks.append(((values - low) / (high - low))[:, None])
    return np.hstack(blocks).astype(np.float32)


def schema_transformer():
    """:func:`schema_features` as a stateless scikit-learn transformer (for pipelines)."""
    return FunctionTransformer(schema_features)


def data_norm():
    """Largest L2 norm of a row of :func:`schema_features`: one 1 per categorical (or none), numerics in [0, 1]."""
    from skpate.datasets import ADULT_CATEGORIES

    return float(np.sqrt(len(ADULT_CATEGORIES) + len(NUMERIC_BOUNDS)))


def encode_labels(y):
    """Map Adult's label strings to 0 / 1 with the public class list (``'>50K'`` is 1).

    Parameters
    ----------
    y : array-like of str

    Returns
    -------
    y01 : ndarray of int64

    Raises
    ------
    ValueError
        If a label is not ``'<=50K'`` or ``'>50K'``.
    """
    y, classes = np.asarray(y, dtype=object), np.asarray(ADULT_CLASSES, dtype=object)
    unknown = ~np.isin(y, classes)
    if unknown.any():
        raise ValueError(f"labels outside {ADULT_CLASSES}: {sorted(set(y[unknown]))[:5]}")
    return (y == classes[1]).astype(np.int64)


def factory(peer, **params):
    """A factory ``(seed, epsilon) -> peer(epsilon=epsilon, random_state=seed, **params)`` for the harness loop."""

    def build(seed, epsilon):
        return peer(epsilon=epsilon, random_state=seed, **params)

    return build


class _Peer(BaseEstimator):
    """Shared ``score`` and the record of the guarantee; subclasses implement ``fit`` and ``predict``."""

    def score(self, X, y):
        """Accuracy on ``(X, y)``."""
        return float(np.mean(self.predict(X) == np.asarray(y)))

    def _fitted(self, spent, noise_multiplier):
        self.privacy_spent_ = (float(self.epsilon), float(self.delta))
        self.spent_epsilon_, self.noise_multiplier_ = float(spent), float(noise_multiplier)
        return self


class AdultDPSGD(_Peer):
    """Opacus DP-SGD on UCI Adult's schema features: logistic regression or a tanh MLP.

    Parameters
    ----------
    epsilon : float, default=1.0
    delta : float, default=DELTA
    neighboring : {"add-remove", "replace-one"}, default="add-remove"
        Opacus's adjacency, or skpate's (see the module docstring).
    hidden : int or None, default=None
        None: one linear layer (logistic regression); else a tanh MLP with this many hidden units.
    lr : float or None, default=None
        None: :data:`ADULT_LR` of the model.
    random_state : int, default=0
    """

    def __init__(self, epsilon=1.0, delta=DELTA, neighboring="add-remove", hidden=None, lr=None, random_state=0):
        self.epsilon = epsilon
        self.delta = delta
        self.neighboring = neighboring
        self.hidden = hidden
        self.lr = lr
        self.random_state = random_state

    def fit(self, X, y, X_public=None):
        """Train on the private rows ``(X, y)``; ``X_public`` is unused."""
        import torch

        features = torch.from_numpy(schema_features(X))
        labels = torch.from_numpy(encode_labels(y)).float()
        n_features, hidden = features.shape[1], self.hidden

        def module():
            if hidden is None:
                return torch.nn.Linear(n_features, 1)
            # tanh: bounded activations keep clipped gradients informative (Papernot et al. 2021).
            return torch.nn.Sequential(torch.nn.Linear(n_features, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1))

        bce = torch.nn.BCEWithLogitsLoss()
        lr = self.lr if self.lr is not None else ADULT_LR["logistic" if hidden is None else "mlp"]
        self.module_, spent, noise = train_dpsgd(
            module, features, labels, lambda out, target: bce(out.squeeze(1), target), self.epsilon, self.delta,
            self.random_state, neighboring=self.neighboring, **{**ADULT_DPSGD, "lr": lr},
        )  # fmt: skip
        return self._fitted(spent, noise)

    def predict(self, X):
        """``'<=50K'`` or ``'>50K'`` for the rows of the DataFrame ``X``."""
        import torch

        with torch.no_grad():
            scores = self.module_(torch.from_numpy(schema_features(X))).squeeze(1).numpy()
        return np.asarray(ADULT_CLASSES, dtype=object)[(scores > 0).astype(np.int64)]


class AdultDiffprivlib(_Peer):
    """diffprivlib's logistic regression on the schema features (objective perturbation; pure epsilon-DP).

    Parameters
    ----------
    epsilon : float, default=1.0
    delta : float, default=DELTA
        Unused by the mechanism (recorded as the run's delta).
    C : float, default=DIFFPRIVLIB_C
    random_state : int, default=0
    """

    def __init__(self, epsilon=1.0, delta=DELTA, C=DIFFPRIVLIB_C, random_state=0):
        self.epsilon = epsilon
        self.delta = delta
        self.C = C
        self.random_state = random_state

    def fit(self, X, y, X_public=None):
        """Train on the private rows ``(X, y)``; raises ``ImportError`` where diffprivlib is not importable."""
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import LogisticRegression

        self.model_ = LogisticRegression(
            epsilon=self.epsilon, data_norm=data_norm(), C=self.C, max_iter=1000, random_state=self.random_state,
            accountant=BudgetAccountant(),  # a private ledger: the global default would accumulate across fits
        )  # fmt: skip
        self.model_.fit(schema_features(X), encode_labels(y))
        return self._fitted(self.epsilon, np.nan)

    def predict(self, X):
        """``'<=50K'`` or ``'>50K'``."""
        return np.asarray(ADULT_CLASSES, dtype=object)[self.model_.predict(schema_features(X))]


# ---------------------------------------------------------------------------------------------------- Fashion-MNIST


def tanh_cnn():
    """The tanh CNN of Papernot et al. 2021 for 1x28x28 inputs and 10 classes (a ``torch.nn.Sequential``)."""
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(1, 16, 8, stride=2, padding=2),  # 28 -> 13
        nn.Tanh(),
        nn.MaxPool2d(2, stride=1),  # 13 -> 12
        nn.Conv2d(16, 32, 4, stride=2),  # 12 -> 5
        nn.Tanh(),
        nn.MaxPool2d(2, stride=1),  # 5 -> 4
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 32),
        nn.Tanh(),
        nn.Linear(32, 10),
    )


class FashionCNNDPSGD(_Peer):
    """Opacus DP-SGD of :func:`tanh_cnn` on Fashion-MNIST pixels scaled to [0, 1] (add/remove adjacency).

    Parameters
    ----------
    epsilon : float, default=1.0
    delta : float, default=DELTA
    random_state : int, default=0
    """

    def __init__(self, epsilon=1.0, delta=DELTA, random_state=0):
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state

    def fit(self, X, y, X_public=None):
        """Train on the private images ``(X, y)`` (flat rows or 28x28); ``X_public`` is unused."""
        import torch

        labels = torch.from_numpy(np.asarray(y, dtype=np.int64))
        self.module_, spent, noise = train_dpsgd(
            tanh_cnn, _images(X), labels, torch.nn.CrossEntropyLoss(), self.epsilon, self.delta, self.random_state,
            **CNN_DPSGD,
        )  # fmt: skip
        return self._fitted(spent, noise)

    def predict(self, X, batch_size=2048):
        """Class indices 0-9."""
        import torch

        images = _images(X)
        with torch.no_grad(), _torch_threads(TORCH_THREADS):
            batches = [self.module_(images[i : i + batch_size]).argmax(1).numpy() for i in range(0, len(X), batch_size)]
        return np.asarray(FASHION_CLASSES)[np.concatenate(batches)]


def _images(X):
    import torch

    X = np.asarray(X, dtype=np.float32)
    return torch.from_numpy(np.ascontiguousarray(X.reshape(len(X), 1, 28, 28)))


class ScatteringLinearDPSGD(_Peer):
    """Opacus DP-SGD of a linear layer on scattering features standardized with the public pool's statistics.

    Parameters
    ----------
    epsilon : float, default=1.0
    delta : float, default=DELTA
    neighboring : {"add-remove", "replace-one"}, default="add-remove"
    lr : float or dict, default=64.0
        The SGD learning rate, or ``{epsilon: {neighboring: lr}}`` tuned per budget
        and relation (the entry of the tuned budget nearest ``epsilon`` on a log scale).
    random_state : int, default=0
    """

    def __init__(self, epsilon=1.0, delta=DELTA, neighboring="add-remove", lr=64.0, random_state=0):
        self.epsilon = epsilon
        self.delta = delta
        self.neighboring = neighboring
        self.lr = lr
        self.random_state = random_state

    def fit(self, X, y, X_public=None):
        """Train on the private rows ``(X, y)``; ``X_public`` (required) gives the free mean and std."""
        import torch

        if X_public is None:
            raise ValueError("ScatteringLinearDPSGD standardizes with the public pool's statistics: pass X_public.")
        self.mean_, self.std_ = X_public.mean(axis=0), X_public.std(axis=0) + 1e-6
        lr = nearest_tuned(self.lr, self.epsilon)[self.neighboring] if isinstance(self.lr, dict) else self.lr
        self.module_, spent, noise = train_dpsgd(
            lambda: torch.nn.Linear(X.shape[1], len(FASHION_CLASSES)), self._scaled(X),
            torch.from_numpy(np.asarray(y, dtype=np.int64)), torch.nn.CrossEntropyLoss(), self.epsilon, self.delta,
            self.random_state, neighboring=self.neighboring, **{**LINEAR_DPSGD, "lr": lr},
        )  # fmt: skip
        return self._fitted(spent, noise)

    def _scaled(self, X):
        import torch

        return torch.from_numpy(((X - self.mean_) / self.std_).astype(np.float32))

    def predict(self, X):
        """Class indices 0-9."""
        import torch

        with torch.no_grad():
            return np.asarray(FASHION_CLASSES)[self.module_(self._scaled(X)).argmax(1).numpy()]


def nearest_tuned(table, epsilon):
    """``table``'s entry for the tuned budget nearest ``epsilon`` on a log scale (other budgets reuse it).

    Parameters
    ----------
    table : dict
        ``{tuned epsilon: setting}``.
    epsilon : float

    Returns
    -------
    setting
    """
    return table[min(table, key=lambda tuned: abs(np.log(tuned / epsilon)))]
