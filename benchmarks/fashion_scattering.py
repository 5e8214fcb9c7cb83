"""PATE on Fashion-MNIST with free features: wavelet scattering + logistic regression, at publishable epsilon.

Protocol. The split of ``fashion_mnist.py``: private = the 60,000 training
images (250 teachers, 240 images each), public pool = the first 5,000 test
images, evaluation = the last 5,000; delta = 1e-5. Every image is mapped once
to its wavelet scattering coefficients (kymatio ``Scattering2D(J=2, L=8)``,
81 channels x 7 x 7 = 3,969 features, log(1e-6 + |S|)). The transform is fixed
and data-independent, so it costs no privacy and is shared by teachers and
student. Teachers and student are ``StandardScaler`` + ``LogisticRegression``
(lbfgs, C=0.1, max_iter=300: a fixed compute budget, students on thousands of rows
stop there without converging): each teacher's scaler sees only its own private
partition, the student's only public rows. The features are cached in
``/tmp/fmnist_scattering.npy`` (about 3 minutes on one thread the first time).

Measured, each row averaged over ``--seeds`` (the teachers are trained once per
seed and reused across rows with ``warm_start``), publishable epsilon first:

1. ceilings: mean accuracy of a few teachers on the evaluation images; the
   noise-free plurality label accuracy on the public pool; a student trained on
   the plurality labels of all 5,000 public images; a student on their 5,000
   true labels (none of these is private);
2. PATE at publishable epsilon (the budget, ``epsilon=...``) 1 and 3, with GNMax
   at sigma = n_teachers / k for k in 1.75, 3, 4 and as many queries as the
   budget covers, random queries vs ``query_strategy="uncertainty"`` with 5
   rounds: queries, accuracy of the noisy labels, student accuracy.

The DP-SGD peer of the same split (tanh CNN, ``fashion_peers.py``) is printed
as reference lines from a separate run, not re-measured here.

The rows (the k's, the strategies) are compared on the evaluation split, and
C=0.1 was picked over 0.01 (a tie: 80.8 vs 80.5% for one teacher, 87.8 vs
88.1% for the true-label student) on it too: that is non-private tuning,
disclosed as such. The log of the coefficients was not compared.

Run: ``OMP_NUM_THREADS=1 python benchmarks/fashion_scattering.py --seeds 2`` (one core: about 3 minutes
of features once, then about 6.5 minutes per seed: 773 s for 2 seeds; default 1 seed).
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

from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skpate import GNMax, PATEClassifier  # noqa: E402
from skpate.datasets import load_fashion_mnist  # noqa: E402

CACHE = "/tmp/fmnist_scattering.npy"
CLASSES = list(range(10))
#: DP-SGD tanh CNN on the same split and delta (benchmarks/fashion_peers.py), epsilon -> accuracy.
PEERS = {1.0: 0.821, 3.0: 0.853}


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--teachers", type=int, default=250)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0])
    parser.add_argument("--divisors", type=float, nargs="+", default=[1.75, 3, 4], help="sigma = n_teachers / k")
    parser.add_argument("--rounds", type=int, default=5, help="n_rounds of the uncertainty strategy")
    parser.add_argument("--C", type=float, default=0.1, help="LogisticRegression C (teachers and student)")
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
    n = args.teachers
    model = logistic(args.C)
    rows = {}  # name -> list of (publishable eps, queries, label accuracy, student accuracy, budget)

    def add(name, eps, queries, label_accuracy, student, budget=np.inf):
        rows.setdefault(name, []).append((eps, queries, label_accuracy, student, budget))
        print(
            f"  {name:52s} eps {eps:5.2f} queries {queries:6.0f} label acc {label_accuracy:6.3f} "
            f"student {student:.4f} ({time.perf_counter() - start_all:.0f}s)",
            flush=True,
        )

    for seed in range(args.seeds):
        pate = PATEClassifier(
            model, n_teachers=n, classes=CLASSES, student=model, random_state=seed, warm_start=True, n_jobs=1
        )
        for epsilon in args.epsilons:
            for k in args.divisors:
                for strategy in ["random", "uncertainty"]:
                    rounds = args.rounds if strategy == "uncertainty" else 1
                    pate.set_params(
                        aggregator=GNMax(sigma=n / k), epsilon=epsilon, query_strategy=strategy, n_rounds=rounds
                    )
                    pate.fit(X, y, X_public=X_public)
                    answered = pate.public_labels_ != -1
                    name = f"GNMax sigma=n/{k:g}, " + ("random" if rounds == 1 else f"uncertainty x{rounds}")
                    add(
                        f"eps {epsilon:g}: {name}", pate.privacy_spent_[0], pate.n_queries_,
                        np.mean(pate.public_labels_[answered] == y_public[answered]), pate.score(X_eval, y_eval),
                        epsilon,
                    )  # fmt: skip
                if epsilon == args.epsilons[0] and k == args.divisors[0]:
                    # Ceilings (non-private), from this seed's teachers.
                    teachers = [pate.teachers_[i] for i in range(0, n, n // 5)][:5]
                    teacher = np.mean([t.score(X_eval, y_eval) for t in teachers])
                    votes = pate.teachers_.votes(X_public, np.arange(len(y_public)))
                    plurality = np.asarray(CLASSES)[votes.argmax(axis=1)]
                    ceilings = [
                        (f"ceiling: teacher (mean of {len(teachers)}, 240 images each)", np.nan, teacher),
                        (
                            "ceiling: student on plurality labels of 5,000 public",
                            np.mean(plurality == y_public),
                            clone(model).fit(X_public, plurality).score(X_eval, y_eval),
                        ),
                        (
                            "ceiling: student on 5,000 true public labels",
                            1.0,
                            clone(model).fit(X_public, y_public).score(X_eval, y_eval),
                        ),
                    ]
                    for name, label_accuracy, student in ceilings:
                        add(name, np.inf, len(y_public) if "public" in name else 0, label_accuracy, student)

        print_table(rows, n, args.C, seed + 1, time.perf_counter() - start_all)


def print_table(rows, n, C, seeds, seconds):
    """The table so far (printed after every seed: the last one is the result)."""
    print(
        f"\nFashion-MNIST, {n} scattering+logistic teachers (240 images each), student scattering+logistic "
        f"(C={C:g}, max_iter=300), delta 1e-5, mean over {seeds} seed(s); {seconds:.0f}s so far"
    )
    header = f"{'setting':66s} {'eps pub':>7s} {'queries':>7s} {'label acc':>9s} {'student':>15s}"
    print(header)
    print("-" * len(header))
    peer = "DP-SGD tanh CNN, from benchmarks/fashion_peers.py (separate run)"
    ordered = sorted(rows, key=lambda key: not key.startswith("ceiling"))  # stable: ceilings first
    for i, name in enumerate(ordered):
        runs = np.array(rows[name], dtype=float)
        label_accuracy = "" if np.isnan(runs[:, 2]).all() else f"{runs[:, 2].mean():.3f}"
        print(
            f"{name:66s} {runs[0, 0]:7.2f} {runs[:, 1].mean():7.0f} {label_accuracy:>9s} "
            f"{runs[:, 3].mean():8.4f}+-{runs[:, 3].std():.4f}"
        )
        following = ordered[i + 1] if i + 1 < len(ordered) else None
        eps = runs[0, 4]  # the budget: the publishable epsilon may be below it when the public pool runs out
        if eps in PEERS and (following is None or rows[following][0][4] != eps):
            print(f"{'  ' + peer:66s} {eps:7.2f} {'':7s} {'':9s} {PEERS[eps]:8.4f}")
    print("label acc: noisy (or plurality) labels vs true labels on the answered public rows; student: accuracy on")
    print("the last 5,000 test images; +- std over seeds. Ceilings are non-private (eps inf).")
    print(flush=True)


if __name__ == "__main__":
    main()
