"""Convolutional networks as scikit-learn classifiers, through skorch.

torch is imported only here: users of the tabular parts never need it.

* :class:`PATECNN`: the PATE 2017 architecture, two convolution + max-pool
  layers and a ReLU dense layer, sized from the image shape.
* :class:`CNNClassifier`: a scikit-learn classifier around a
  ``skorch.NeuralNetClassifier`` of that module. It adds what a raw skorch net
  lacks as a PATE teacher: any class labels (encoded to ``0..K-1``, absent
  classes allowed), ``random_state`` (seeds torch, so that ``PATEClassifier``
  seeds every teacher), silence by default and a bounded number of torch
  threads (so that joblib workers do not oversubscribe the cores). Both are
  scoped to the call: the caller's torch RNG state and thread count are
  restored afterwards.
* ``semi_supervised=True``: virtual adversarial training (VAT, Miyato et al.
  2018), the PATE 2018 image student: rows labeled ``-1`` contribute a
  consistency loss.
"""

import contextlib
import math

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted
from skorch import NeuralNetClassifier
from skorch.dataset import unpack_data
from torch import nn

__all__ = ["PATECNN", "CNNClassifier", "make_cnn"]


@contextlib.contextmanager
def _torch_threads(n_threads):
    """Run the block with ``n_threads`` torch threads, then restore the caller's count.

    Parameters
    ----------
    n_threads : int or None
        None (or 0) leaves torch's setting alone.
    """
    if not n_threads:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(n_threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class PATECNN(nn.Module):
    """Two conv + max-pool layers and a ReLU dense layer (PATE 2017's CNN).

    Parameters
    ----------
    image_shape : tuple of int
        ``(channels, height, width)``; inputs may be flat, they are reshaped.
    n_classes : int
    channels : tuple of int, default=(32, 64)
        Filters of the two 5x5 convolutions.
    hidden_units : int, default=128
    dropout : float, default=0.25
    """

    def __init__(self, image_shape=(1, 28, 28), n_classes=10, channels=(32, 64), hidden_units=128, dropout=0.25):
        super().__init__()
        self.image_shape = tuple(image_shape)
        c, h, w = self.image_shape
        self.features = nn.Sequential(
            nn.Conv2d(c, channels[0], 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2, ceil_mode=True),
            nn.Conv2d(channels[0], channels[1], 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2, ceil_mode=True),
        )
        flat = channels[1] * math.ceil(h / 4) * math.ceil(w / 4)  # two ceil-mode 2x2 pools
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Dropout(dropout),
            nn.Linear(flat, hidden_units),
            nn.ReLU(),
            nn.Linear(hidden_units, n_classes),
        )

    def forward(self, X):
        return self.classifier(self.features(X.reshape(-1, *self.image_shape)))


def _kl_from_logits(p_logits, q_logits):
    """Mean KL(p || q) between the softmaxes of two logit batches."""
    return F.kl_div(
        F.log_softmax(q_logits, dim=1), F.log_softmax(p_logits, dim=1), log_target=True, reduction="batchmean"
    )


class _VATNet(NeuralNetClassifier):
    """skorch net whose loss adds virtual adversarial training on every row.

    Labeled rows (``y >= 0``) pay cross-entropy; all rows pay the VAT
    consistency loss ``KL(p(x) || p(x + r_adv))`` with ``r_adv`` one power
    iteration from a random direction (Miyato et al. 2018, Alg. 1). Dropout
    stays on and is redrawn in each of the three forward passes.
    """

    def __init__(self, *args, vat_eps=2.0, vat_xi=1e-6, vat_weight=1.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.vat_eps = vat_eps
        self.vat_xi = vat_xi
        self.vat_weight = vat_weight

    def _vat_loss(self, X, logits):
        logits = logits.detach()
        shape = (-1,) + (1,) * (X.dim() - 1)

        def unit(d):
            return d / (d.flatten(1).norm(dim=1).reshape(shape) + 1e-12)

        d = unit(torch.randn_like(X)).requires_grad_()
        distance = _kl_from_logits(logits, self.module_(X + self.vat_xi * d))
        (grad,) = torch.autograd.grad(distance, d)
        return _kl_from_logits(logits, self.module_(X + self.vat_eps * unit(grad)))

    def train_step_single(self, batch, **fit_params):
        self._set_training(True)
        X, y = unpack_data(batch)
        logits = self.infer(X, **fit_params)
        labeled = y >= 0
        loss = self.vat_weight * self._vat_loss(X, logits)
        if labeled.any():
            loss = loss + F.cross_entropy(logits[labeled], y[labeled])
        loss.backward()
        return {"loss": loss, "y_pred": logits}


class CNNClassifier(ClassifierMixin, BaseEstimator):
    """A :class:`PATECNN` trained with skorch, as a scikit-learn classifier.

    Parameters
    ----------
    image_shape : tuple of int, default=(1, 28, 28)
        ``(channels, height, width)`` of the images; ``X`` may be flat
        ``(n, c*h*w)`` or ``(n, c, h, w)``, float pixels (scale them to [0, 1]).
    channels : tuple of int, default=(32, 64)
    hidden_units : int, default=128
    dropout : float, default=0.25
    max_epochs : int, default=20
    batch_size : int, default=64
    lr : float, default=1e-3
        Adam learning rate.
    semi_supervised : bool, default=False
        Train with VAT: rows labeled ``-1`` are unlabeled and only enter the
        consistency loss (use as a PATE student).
    vat_eps : float, default=2.0
        L2 radius of the virtual adversarial perturbation (pixels in [0, 1]).
    device : str, default="cpu"
    n_threads : int or None, default=1
        torch threads during ``fit``/``predict`` (1 suits joblib workers; None
        keeps torch's setting). The caller's count is restored afterwards.
    random_state : int or None, default=None
        Seeds torch's initialisation, dropout, batch shuffling and VAT
        directions. The seed is applied to a forked RNG state: the caller's
        torch RNG stream is left as it was. None draws from that stream.
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray
    net_ : skorch.NeuralNetClassifier
        The trained skorch net (predicts encoded classes ``0..K-1``).
    n_features_in_ : int
    """

    def __init__(
        self,
        image_shape=(1, 28, 28),
        channels=(32, 64),
        hidden_units=128,
        dropout=0.25,
        max_epochs=20,
        batch_size=64,
        lr=1e-3,
        semi_supervised=False,
        vat_eps=2.0,
        device="cpu",
        n_threads=1,
        random_state=None,
        verbose=0,
    ):
        self.image_shape = image_shape
        self.channels = channels
        self.hidden_units = hidden_units
        self.dropout = dropout
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.semi_supervised = semi_supervised
        self.vat_eps = vat_eps
        self.device = device
        self.n_threads = n_threads
        self.random_state = random_state
        self.verbose = verbose

    @property
    def _skpate_semi_supervised(self):
        """Read by PATEClassifier: give the student the unanswered rows too."""
        return bool(self.semi_supervised)

    def _inputs(self, X):
        X = np.asarray(X, dtype=np.float32)
        if not X.flags.writeable:  # joblib's read-only memmaps; torch wants writable memory
            X = X.copy()
        expected = int(np.prod(self.image_shape))
        if X.ndim < 2 or int(np.prod(X.shape[1:])) != expected:
            raise ValueError(f"X must hold images of shape image_shape={tuple(self.image_shape)}; got {X.shape}.")
        return X

    def fit(self, X, y):
        """Train the network.

        Parameters
        ----------
        X : array-like of shape (n_samples, c*h*w) or (n_samples, c, h, w)
        y : array-like of shape (n_samples,)
            Labels; with ``semi_supervised=True``, ``-1`` marks unlabeled rows.

        Returns
        -------
        self : CNNClassifier
        """
        X = self._inputs(X)
        y = np.asarray(y)
        unlabeled = (y == -1) if (self.semi_supervised and y.dtype.kind in "iufO") else np.zeros(len(y), bool)
        self.classes_ = np.unique(y[~unlabeled])
        if self.classes_.size < 1:
            raise ValueError("y has no labeled row.")
        y_encoded = np.full(len(y), -1, dtype=np.int64)
        y_encoded[~unlabeled] = np.searchsorted(self.classes_, y[~unlabeled])
        self.n_features_in_ = int(np.prod(X.shape[1:]))
        net_class = _VATNet if self.semi_supervised else NeuralNetClassifier
        extra = {"vat_eps": self.vat_eps} if self.semi_supervised else {}
        self.net_ = net_class(
            PATECNN,
            module__image_shape=tuple(self.image_shape),
            module__n_classes=max(int(self.classes_.size), 2),
            module__channels=tuple(self.channels),
            module__hidden_units=self.hidden_units,
            module__dropout=self.dropout,
            criterion=nn.CrossEntropyLoss,
            optimizer=torch.optim.Adam,
            lr=self.lr,
            max_epochs=self.max_epochs,
            batch_size=self.batch_size,
            iterator_train__shuffle=True,
            train_split=None,
            device=self.device,
            verbose=self.verbose,
            **extra,
        )
        seeded = self.random_state is not None
        # Module initialisation, dropout, shuffling and VAT directions draw from torch's global generator (layers
        # and dropout take no torch.Generator), so seed it inside fork_rng, which restores the caller's state on exit.
        with _torch_threads(self.n_threads), torch.random.fork_rng(enabled=seeded):
            if seeded:
                torch.manual_seed(self.random_state)
            self.net_.fit(X, y_encoded)
        return self

    def predict_proba(self, X):
        """Class probabilities, columns in ``classes_`` order."""
        check_is_fitted(self, "net_")
        # No randomness in eval mode, but each DataLoader iterator draws a base seed from the global generator:
        # fork so that predicting does not advance the caller's stream.
        with _torch_threads(self.n_threads), torch.random.fork_rng():
            proba = self.net_.predict_proba(self._inputs(X))
        return proba[:, : self.classes_.size] if self.classes_.size > 1 else np.ones((len(proba), 1))

    def predict(self, X):
        """Predicted class labels."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def make_cnn(image_shape=(1, 28, 28), **params):
    """A :class:`CNNClassifier` for images of ``image_shape`` (CPU, quiet by default).

    Examples
    --------
    >>> from skpate import PATEClassifier
    >>> from skpate.nets import make_cnn
    >>> pate = PATEClassifier(make_cnn((1, 8, 8), max_epochs=10), n_teachers=20)
    """
    return CNNClassifier(image_shape=image_shape, **params)
