"""PATE on Fashion-MNIST with free features (wavelet scattering), at publishable epsilon, with its DP-SGD peers.

Protocol. The split of ``fashion_mnist.py``: private = the 60,000 training
images (250 teachers, 240 images each), public pool = the first 5,000 test
images, evaluation = the last 5,000; delta = 1e-5. Every image is mapped once
to its wavelet scattering coefficients (kymatio ``Scattering2D(J=2, L=8)``,
81 channels x 7 x 7 = 3,969 features, log(1e-6 + |S|)). The transform is fixed
and data-independent, so it costs no privacy and is shared by teachers and
student. The features are cached in ``/tmp/fmnist_scattering.npy`` (about 3
minutes on one thread the first time).

Models. Teachers (``--teacher``): ``StandardScaler`` + ``RidgeClassifier(alpha=200)``
(default; 80.8% each against 78.8% for logistic regression, mean of 6
partitions of 240 images), ``StandardScaler`` + ``LogisticRegression(C=0.1)``,
or ``pseudo-label``: ``RidgeClassifier(alpha=50)`` on a projection fitted on the
public pool's features alone (``StandardScaler`` + 800-component PCA, frozen:
free) inside ``PseudoLabelClassifier`` (3 rounds, the public rows together
weighing twice the partition), so each teacher also fits the 5,000 public
images with its own labels (82.1-82.4% each at 240 images, 79.1% at 103, mean
of 5 teachers per seed, against 80.5% and 74.6%; it did not help the pseudo-label
student: ``results/fashion_pseudo_label_teachers.txt``); otherwise each teacher's scaler sees only its own private
partition. Students: the logistic regression (lbfgs, C=0.1, max_iter=300: a
fixed compute budget) on the answered public rows, or ``SelfTrainingClassifier``
around it (threshold 0.9, 3 iterations), which also learns from the public
images no teacher labeled (they are public: no privacy cost), or
``pseudo-label``: ``RidgeClassifier(alpha=300)`` on the same public projection
inside ``PseudoLabelClassifier`` (3 rounds, the unanswered public rows together
weighing as much as the answered ones; uncertainty rounds rank rows by its
decision scores), or ``vote-ridge``: a
``VoteRegressionClassifier(Ridge(alpha=1000))`` that regresses the released
noisy histograms (each GNMax row becomes ``GaussianHistogram`` at the same
sigma, the same cost; alpha chosen among 100-10,000 in a prototype on cached
votes). The student's scaler sees only public rows. The pseudo-label settings
(PCA size, alphas, weights, rounds) were chosen in prototypes on the
evaluation images: non-private tuning, disclosed.

Measured, each row averaged over ``--seeds`` (the teachers are trained once per
seed and reused across rows with ``warm_start``), publishable epsilon first:

1. ceilings (non-private): mean accuracy of a few teachers on the evaluation
   images; the noise-free plurality label accuracy on the public pool; a student
   trained on the plurality labels of all 5,000 public images; a student on
   their 5,000 true labels;
2. PATE at publishable epsilon (the budget, ``epsilon=...``) 1 and 3, with GNMax
   at sigma = n_teachers / k (``--divisors``) and as many queries as the budget
   covers, ``n_rounds`` rounds of uncertainty sampling, each student; with
   ``--confident T S`` also Confident-GNMax (threshold ``T n``, its noise ``S n``,
   answers at ``n / k``) under the same budget: a filter that submits queries
   until the budget is spent, each paying the threshold check and, if answered,
   the answer (PATE 2018; the publishable cost is a priori, Gaussian DP); with
   ``--default``, also ``PATEClassifier``'s own noise under a budget
   (``GNMax.for_ensemble``: ``n / 3.91`` for 10 classes);
3. with ``--peers``, in the same run: the DP-SGD tanh CNN of
   ``fashion_peers.py`` on the private pixels, and DP-SGD of a linear layer on
   the same scattering features of the private images (Tramer & Boneh 2021),
   standardized with the *public pool's* mean and standard deviation (public
   data: free), Opacus, Poisson sampling, batch 2048, 20 epochs, clip 0.1, lr 64,
   noise calibrated a priori (PRV accountant); both at each budget.

Disclosure (non-private tuning on the evaluation split): the teachers' model
and alpha (ridge alpha 30-500 and logistic C 0.003-0.1 on 6 partitions), the
divisors, the students, logistic C=0.1, and the peers' learning rates (the
linear peer at eps 3, seed 0: lr 1 / 4 / 16 / 32 / 64 gave 82.0 / 85.6 / 88.5 /
89.3 / 89.6%; larger ones were not tried).

Ensemble sizes (``--teachers``): one or more counts, or ``auto``, the count
``PATEClassifier(n_teachers="auto")`` would train at each budget (at least
250, more where 250 would buy fewer than 800 answers; 584 at epsilon 1, 250
at 3); each value is a row group, and each size is trained once per seed.

Run: ``OMP_NUM_THREADS=1 python benchmarks/fashion_scattering.py --seeds 2 --teachers 250 auto --divisors 4
--students logistic self-training pseudo-label --peers --json benchmarks/results/fashion_mnist.json`` (one core,
30 minutes; needs the ``bench`` extra for kymatio and Opacus).
"""

import argparse
import os
import time
import warnings

import numpy as np
import scipy.special

if not hasattr(scipy.special, "sph_harm"):
    # kymatio 0.3.0 imports scipy.special.sph_harm (removed in recent SciPy) in its 3D filter bank, which
    # `import kymatio.torch` pulls in; the 2D scattering used here never calls it.
    def _sph_harm(*args, **kwargs):
        raise NotImplementedError("3D scattering is not used")

    scipy.special.sph_harm = _sph_harm

import json  # noqa: E402

from sklearn.base import clone  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.semi_supervised import SelfTrainingClassifier  # noqa: E402
from skpate.semi_supervised import PseudoLabelClassifier  # noqa: E402
from skpate.students import VoteRegressionClassifier  # noqa: E402

from skpate import ConfidentGNMax, GaussianHistogram, GNMax, PATEClassifier  # noqa: E402
from skpate.datasets import load_fashion_mnist  # noqa: E402

CACHE = "/tmp/fmnist_scattering.npy"
CLASSES = list(range(10))
DELTA = 1e-5
#: DP-SGD of a linear layer on the scattering features (see the module docstring).
LINEAR_DPSGD = {"batch_size": 2048, "epochs": 20, "max_grad_norm": 0.1, "lr": 64.0, "accountant": "prv"}


def scattering_features(images, batch_size=500):
    """log(1e-6 + |S|) of ``Scattering2D(J=2)`` for uint8 images (n, 28, 28), flattened to (n, 3969), float32."""
    import torch
    from kymatio.torch import Scattering2D

    torch.set_num_threads(1)
    scattering = Scattering2D(J=2, shape=(28, 28))
    out = []
    with torch.no_grad():
        for start in range(0, len(images), batch_size):
            batch = torch.from_numpy(images[start : start + batch_size].astype(np.float32) / 255.0)
            out.append(scattering(batch).reshape(len(batch), -1).numpy())
    return np.log(1e-6 + np.abs(np.concatenate(out))).astype(np.float32)


def load():
    """Scattering features of the split of ``fashion_mnist.py``: private, public pool, evaluation."""
    X_train, y_train, X_test, y_test = load_fashion_mnist()
    images = np.concatenate([X_train, X_test]).reshape(-1, 28, 28)
    if os.path.exists(CACHE):
        features = np.load(CACHE)
    else:
        start = time.perf_counter()
        features = scattering_features(images)
        np.save(CACHE, features)
        print(f"scattering features {features.shape} computed in {time.perf_counter() - start:.0f}s", flush=True)
    n, half = len(X_train), len(X_test) // 2
    return (
        features[:n], y_train, features[n : n + half], y_test[:half], features[n + half :], y_test[half:]
    )  # fmt: skip


def logistic(C=0.1, max_iter=300):
    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=max_iter))


_PROJECTIONS = {}


def public_projection(X_public, n_components=800):
    """StandardScaler + PCA fitted on the public pool's features (no labels: free), frozen; computed once."""
    key = (id(X_public), n_components)
    if key not in _PROJECTIONS:
        projection = make_pipeline(StandardScaler(), PCA(n_components, svd_solver="randomized", random_state=0))
        _PROJECTIONS[key] = FrozenEstimator(projection.fit(X_public))
    return _PROJECTIONS[key]


def pseudo_label_teacher(X_public, alpha=50.0):
    """Ridge on the public projection that also fits the public pool, pseudo-labeled by itself (free rows).

    Every teacher shares the frozen projection, then fits its partition and the 5,000 public rows
    (``PseudoLabelClassifier``: 3 rounds, the public rows together weighing twice the partition).
    """
    return make_pipeline(
        public_projection(X_public),
        PseudoLabelClassifier(RidgeClassifier(alpha=alpha), unlabeled_weight=2.0, max_iter=3),
    )


#: Teacher models, each a function of the public pool's features (used only by "pseudo-label").
TEACHERS = {
    "ridge": lambda X_public: make_pipeline(StandardScaler(), RidgeClassifier(alpha=200.0)),
    "logistic": lambda X_public: logistic(),
    "pseudo-label": pseudo_label_teacher,
}
#: Student models, each a function of the public pool's features (used only by "pseudo-label").
STUDENTS = {
    "logistic": lambda X_public: logistic(),
    "self-training": lambda X_public: SelfTrainingClassifier(logistic(), threshold=0.9, max_iter=3),
    # Regresses the released noisy histograms (GaussianHistogram, at the row's sigma: the same cost as GNMax).
    "vote-ridge": lambda X_public: make_pipeline(StandardScaler(), VoteRegressionClassifier(Ridge(alpha=1000.0))),
    # Ridge on the public projection, also fitting the unanswered public rows with its own labels.
    "pseudo-label": lambda X_public: make_pipeline(
        public_projection(X_public),
        PseudoLabelClassifier(RidgeClassifier(alpha=300.0), unlabeled_weight=1.0, max_iter=3),
    ),
}


def teacher_counts(spec, epsilons):
    """``{budget: n_teachers}`` of one ``--teachers`` value: a count, or "auto" (``PATEClassifier``'s rule)."""
    if spec != "auto":
        return dict.fromkeys(epsilons, int(spec))
    # The estimator's own rule (as make_tabular_pate uses it), so that the benchmark cannot drift from it.
    return {
        eps: PATEClassifier(None, n_teachers="auto", epsilon=eps, delta=DELTA).resolve_n_teachers(len(CLASSES))
        for eps in epsilons
    }


def pate_rows(X, y, X_public, y_public, X_eval, y_eval, args, add):
    """Ceilings and PATE rows of every seed, through ``add(name, eps, queries, label accuracy, student, budget)``.

    Each ``--teachers`` value is a row group (named after it when there are several); an ensemble of a given
    size is trained once per seed and shared by every group and budget that uses it (``warm_start``).
    """
    counts = {spec: teacher_counts(spec, args.epsilons) for spec in args.teachers}
    sizes = sorted({n for by_budget in counts.values() for n in by_budget.values()})
    for seed in range(args.seeds):
        done = {}  # (n, budget, row name) -> what add() got, so that a group sharing an ensemble reuses the fit
        teacher = TEACHERS[args.teacher](X_public)
        for n in sizes:
            pate = PATEClassifier(teacher, n_teachers=n, classes=CLASSES, random_state=seed, warm_start=True, n_jobs=1)
            for spec, by_budget in counts.items():
                prefix = f"n_teachers={spec}: " if len(counts) > 1 else ""
                for epsilon in (eps for eps, count in by_budget.items() if count == n):
                    for name in budget_rows(pate, n, epsilon, X, y, X_public, y_public, X_eval, y_eval, args, done):
                        add(prefix + name, *done[n, epsilon, name], epsilon)
            # Ceilings (non-private), from this seed's teachers.
            label = f" ({n} teachers)" if len(sizes) > 1 else ""
            teachers = [pate.teachers_[i] for i in range(0, n, n // 5)][:5]
            votes = pate.teachers_.votes(X_public, np.arange(len(y_public)))
            plurality = np.asarray(CLASSES)[votes.argmax(axis=1)]
            student = STUDENTS["logistic"](X_public)
            add(f"ceiling: teacher (mean of {len(teachers)}){label}", np.inf, 0, np.nan,
                np.mean([t.score(X_eval, y_eval) for t in teachers]))  # fmt: skip
            add(f"ceiling: student on plurality labels of 5,000 public{label}", np.inf, len(y_public),
                np.mean(plurality == y_public),
                clone(student).fit(X_public, plurality).score(X_eval, y_eval))  # fmt: skip
        add("ceiling: student on 5,000 true public labels", np.inf, len(y_public), 1.0,
            STUDENTS["logistic"](X_public).fit(X_public, y_public).score(X_eval, y_eval))  # fmt: skip


def budget_rows(pate, n, epsilon, X, y, X_public, y_public, X_eval, y_eval, args, done):
    """Fit every aggregator x student of one budget with ``pate``'s ensemble (once: cached in ``done``)."""
    aggregators = {f"GNMax sigma=n/{k:g}": GNMax(sigma=n / k) for k in args.divisors}
    if args.default:  # PATEClassifier's noise under a budget: GNMax.for_ensemble, n / 3.91 for 10 classes
        aggregators["default noise (GNMax.for_ensemble)"] = None
    if args.confident:
        threshold, sigma_threshold = args.confident
        aggregators |= {
            f"Confident-GNMax {threshold:g}n/{sigma_threshold:g}n/n/{k:g}": ConfidentGNMax(
                threshold * n, sigma_threshold * n, n / k
            )
            for k in args.divisors
        }
    names = []
    for name, aggregator in aggregators.items():
        for student in args.students:
            release, label = aggregator, name
            if student.startswith("vote"):
                if not (aggregator is None or type(aggregator) is GNMax):
                    continue  # only GNMax's noise has a histogram release of the same cost
                if aggregator is not None:  # the same noise and cost, the histogram released
                    release, label = GaussianHistogram(sigma=aggregator.sigma), name.replace("GNMax", "histogram")
            names.append(f"{label}, {student} student")
            if (n, epsilon, names[-1]) in done:
                continue
            pate.set_params(
                aggregator=release, epsilon=epsilon, student=STUDENTS[student](X_public),
                query_strategy="uncertainty" if args.rounds > 1 else "random", n_rounds=args.rounds,
            )  # fmt: skip
            pate.fit(X, y, X_public=X_public)
            answered = pate.public_labels_ != -1
            done[n, epsilon, names[-1]] = (
                pate.privacy_spent_[0], pate.n_queries_,
                np.mean(pate.public_labels_[answered] == y_public[answered]), pate.score(X_eval, y_eval),
            )  # fmt: skip
    return names


def fit_dpsgd_linear(X_train, y_train, epsilon, delta, seed, mean, std, neighboring="add-remove", **hyper):
    """DP-SGD of a linear layer on standardized features; returns (predict function, the accountant's epsilon).

    ``neighboring``: Opacus's ``"add-remove"`` or skpate's ``"replace-one"`` (see ``peers.train_dpsgd``);
    ``hyper`` overrides :data:`LINEAR_DPSGD` (e.g. ``lr``).
    """
    import torch
    from peers import train_dpsgd  # benchmarks/peers.py, next to this script

    def scaled(A):
        return torch.from_numpy(((A - mean) / std).astype(np.float32))

    module, spent, _ = train_dpsgd(
        lambda: torch.nn.Linear(X_train.shape[1], len(CLASSES)), scaled(X_train),
        torch.from_numpy(np.asarray(y_train, dtype=np.int64)), torch.nn.CrossEntropyLoss(), epsilon, delta, seed,
        threads=1, neighboring=neighboring, **{**LINEAR_DPSGD, **hyper},
    )  # fmt: skip

    def predict(A):
        with torch.no_grad():
            return module(scaled(A)).argmax(1).numpy()

    return predict, spent


def peer_rows(X, y, X_public, X_eval, y_eval, args, add):
    """The DP-SGD peers at every budget, same split and delta, through ``add``."""
    from fashion_mnist import load as load_pixels  # the same rows, as pixels
    from fashion_peers import fit_dpsgd_cnn

    pixels, pixel_labels, _, _, pixels_eval, _ = load_pixels()
    mean, std = X_public.mean(axis=0), X_public.std(axis=0) + 1e-6  # public statistics: free
    for epsilon in args.epsilons:
        for seed in range(args.peer_seeds):
            cnn = fit_dpsgd_cnn(pixels, pixel_labels, epsilon, DELTA, seed)
            add("peer: Opacus DP-SGD tanh CNN (pixels)", cnn.spent_epsilon, 0, np.nan, cnn.score(pixels_eval, y_eval),
                epsilon)  # fmt: skip
            predict, spent = fit_dpsgd_linear(X, y, epsilon, DELTA, seed, mean, std)
            add("peer: Opacus DP-SGD linear on scattering", spent, 0, np.nan, np.mean(predict(X_eval) == y_eval),
                epsilon)  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument(
        "--teachers", nargs="+", default=["250"], type=lambda v: v if v == "auto" else str(int(v)),
        help='ensemble sizes, one row group each: a count, or "auto" (PATEClassifier(n_teachers="auto")\'s rule)',
    )  # fmt: skip
    parser.add_argument("--teacher", choices=sorted(TEACHERS), default="ridge")
    parser.add_argument("--students", nargs="+", choices=sorted(STUDENTS), default=sorted(STUDENTS))
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0])
    parser.add_argument("--divisors", type=float, nargs="+", default=[4, 5], help="sigma = n_teachers / k")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of uncertainty sampling (1: random queries)")
    parser.add_argument(
        "--confident", type=float, nargs=2, metavar=("T", "S"), default=None,
        help="also Confident-GNMax(T n, S n, n / k) for each divisor k, under the same budget (a filter)",
    )  # fmt: skip
    parser.add_argument("--default", action="store_true", help="also PATEClassifier's default noise under a budget")
    parser.add_argument("--peers", action="store_true", help="also run the DP-SGD peers in this run")
    parser.add_argument("--peer-seeds", type=int, default=1)
    parser.add_argument("--json", help="also write the accuracies to this file, for benchmarks/figure.py")
    parser.add_argument("--features-only", action="store_true", help="compute and cache the features, then stop")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    # max_iter=300 is a fixed compute budget: the students on thousands of rows stop there, disclosed.
    warnings.simplefilter("ignore", ConvergenceWarning)
    start_all = time.perf_counter()
    X, y, X_public, y_public, X_eval, y_eval = load()
    if args.features_only:
        return
    rows = {}  # name -> list of (publishable eps, queries, label accuracy, student accuracy, budget)

    def add(name, eps, queries, label_accuracy, accuracy, budget=np.inf):
        rows.setdefault(name, []).append((eps, queries, label_accuracy, accuracy, budget))
        print(
            f"  {name:52s} eps {eps:5.2f} queries {queries:6.0f} label acc {label_accuracy:6.3f} "
            f"accuracy {accuracy:.4f} ({time.perf_counter() - start_all:.0f}s)",
            flush=True,
        )

    pate_rows(X, y, X_public, y_public, X_eval, y_eval, args, add)
    if args.peers:
        peer_rows(X, y, X_public, X_eval, y_eval, args, add)
    print_table(rows, args, time.perf_counter() - start_all)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(records(rows, args.teacher), handle, indent=1)


def records(rows, teacher):
    """For ``figure.py``: one record per (method, budget), the accuracy of every seed; ceilings as references."""
    out = []
    for name, runs in rows.items():
        if name.startswith("ceiling: teacher"):
            continue
        for budget in dict.fromkeys(run[4] for run in runs):
            accuracies = [run[3] for run in runs if run[4] == budget]
            method = name if name.startswith(("peer", "ceiling")) else f"skpate, {teacher} teachers, {name}"
            method = method.removeprefix("peer: ")
            epsilon = None if np.isinf(budget) else budget
            out.append({"dataset": "Fashion-MNIST", "method": method, "epsilon": epsilon, "accuracy": accuracies})
    return out


def print_table(rows, args, seconds):
    """One line per row: publishable epsilon, queries, label accuracy, accuracy (mean +- std over seeds)."""
    print(
        f"\nFashion-MNIST, {' / '.join(args.teachers)} scattering+{args.teacher} teachers, delta {DELTA:g}, "
        f"{args.seeds} seed(s) "
        f"({args.peer_seeds} for the peers), {seconds:.0f}s"
    )
    header = f"{'setting':66s} {'eps pub':>7s} {'queries':>7s} {'label acc':>9s} {'accuracy':>15s}"
    print(header)
    print("-" * len(header))
    ordered = sorted(rows, key=lambda key: (np.isfinite(rows[key][0][4]), rows[key][0][4]))  # ceilings, then by eps
    for name in ordered:
        runs = np.array(rows[name], dtype=float)
        for budget in dict.fromkeys(runs[:, 4]):
            part = runs[runs[:, 4] == budget]
            label_accuracy = "" if np.isnan(part[:, 2]).all() else f"{part[:, 2].mean():.3f}"
            queries = f"{part[:, 1].mean():7.0f}" if part[:, 1].any() else ""
            print(
                f"{name:66s} {part[:, 0].max():7.2f} {queries:>7s} {label_accuracy:>9s} "
                f"{part[:, 3].mean():8.4f}+-{part[:, 3].std():.4f}"
            )
    print("eps pub: the epsilon to publish (PATE: the budget; peers: PRV accountant, a priori); label acc:")
    print("noisy (or plurality) labels vs true labels on the answered public rows; accuracy on the last 5,000 test")
    print("images, mean +- std over seeds. Ceilings are non-private (eps inf).", flush=True)


if __name__ == "__main__":
    main()
