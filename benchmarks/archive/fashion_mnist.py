"""PATE with CNN teachers and students on Fashion-MNIST, on the CPU.

250 CNN teachers share the 60,000 training images (240 each); the public pool
is the first half of the test set, the evaluation set the second half;
delta = 1e-5. Needs the files: ``apt-get install dataset-fashion-mnist``.

Run: ``python benchmarks/fashion_mnist.py [--teachers 250] [--seeds 2] [--n-jobs 2]``
(about 50 minutes on 2 cores; the VAT students take most of it).

Prints (1) teacher training time per teacher under different torch/joblib
thread settings, (2) one table over aggregators and students, with the
teachers trained once and reused (``warm_start``), each row averaged over
draws of the queries, the noise and the student's seed, (3) "oracle" students
trained on *true* labels of the public pool (what no PATE student of this
pool can beat) and the non-private CNN on all 60,000 images, and (4) with
``--peers``, the DP-SGD peer of ``fashion_peers.py`` (Opacus, tanh CNN, same
split and delta, trained on the 60,000 private images) at each distinct
publishable epsilon ("eps pub") of the private PATE rows above, or at
``--peer-epsilons`` (about 5 minutes per fit and seed, one torch thread).
"""

import argparse
import time

import numpy as np
from sklearn.base import clone
from sklearn.semi_supervised import SelfTrainingClassifier

from skpate import ConfidentGNMax, GNMax, InteractiveGNMax, LNMax, PATEClassifier, Plurality
from skpate.datasets import load_fashion_mnist
from skpate.nets import make_cnn

#: The label set, public (the dataset's documentation): never taken from the private labels.
CLASSES = list(range(10))
#: Small and fast: a teacher sees 240 images.
TEACHER = dict(channels=(16, 32), hidden_units=64, max_epochs=20, batch_size=32)
#: The student trains alone in the main process: all of torch's threads.
STUDENT = dict(channels=(32, 64), hidden_units=128, max_epochs=30, batch_size=32, n_threads=None)


def load():
    X_train, y_train, X_test, y_test = load_fashion_mnist()

    def flat(images):
        return (images.reshape(len(images), -1) / 255.0).astype(np.float32)

    half = len(X_test) // 2
    return flat(X_train), y_train, flat(X_test[:half]), y_test[:half], flat(X_test[half:]), y_test[half:]


def teacher_timing(X, y, X_public, n_jobs):
    """Seconds per teacher for 10 teachers under three thread settings."""
    rows = []
    for label, jobs, threads in [
        (f"{n_jobs} joblib workers x 1 torch thread", n_jobs, 1),
        (f"{n_jobs} joblib workers x default torch threads", n_jobs, None),
        ("1 process x default torch threads", 1, None),
    ]:
        clf = PATEClassifier(
            make_cnn(**TEACHER, n_threads=threads), n_teachers=10, aggregator=Plurality(), max_queries=200,
            classes=CLASSES, random_state=0, n_jobs=jobs,
        )  # fmt: skip
        start = time.perf_counter()
        clf.fit(X[:2400], y[:2400], X_public=X_public)
        rows.append((label, (time.perf_counter() - start) / 10))
    return rows


def confident(n_teachers):
    """Confident-GNMax at the papers' MNIST setting (200, 150, 40 for 250 teachers), scaled to ``n_teachers``.

    The query budget (700, for eps (dd) <= 2) was chosen on these teachers'
    votes: 800 gave 2.03 and 600 gave 1.70 (tuning on private votes is itself
    not private; the papers do the same).
    """
    return ConfidentGNMax(threshold=0.8 * n_teachers, sigma_threshold=0.6 * n_teachers, sigma=0.16 * n_teachers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teachers", type=int, default=250)
    parser.add_argument("--seeds", type=int, default=2, help="query/noise/student draws per row (teachers reused)")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--peers", action="store_true", help="also run the DP-SGD CNN peer (fashion_peers.py) at the PATE rows' eps pub"
    )
    parser.add_argument("--peer-seeds", type=int, default=1, help="seeds per epsilon of the DP-SGD peer")
    parser.add_argument("--peer-epochs", type=int, default=None, help="DP-SGD epochs (default: fashion_peers')")
    parser.add_argument(
        "--peer-epsilons", type=float, nargs="+", default=None, help="instead of the PATE rows' eps pub"
    )
    args = parser.parse_args()
    X, y, X_public, y_public, X_eval, y_eval = load()
    n = args.teachers

    print("teacher training time (fit on 240 images + votes on 200 queries), seconds per teacher")
    for label, seconds in teacher_timing(X, y, X_public, args.n_jobs):
        print(f"  {label:48s} {seconds:6.2f}")

    supervised = make_cnn(**STUDENT)
    semi = make_cnn(**STUDENT, semi_supervised=True)
    self_training = SelfTrainingClassifier(make_cnn(**STUDENT), threshold=0.95, max_iter=2)
    queries, more = 700, 1000  # eps (dd) <= 2 on these teachers' votes; more queries, for equal-epsilon comparisons
    settings = [  # name, aggregator, student, max_queries, n_rounds, query_strategy
        ("plurality (non-private)", Plurality(), supervised, queries, 1, "random"),
        ("LNMax scale=20", LNMax(scale=20), supervised, 100, 1, "random"),
        (f"GNMax sigma={0.16 * n:g}", GNMax(sigma=0.16 * n), supervised, 300, 1, "random"),
        ("Confident-GNMax, supervised", confident(n), supervised, queries, 1, "random"),
        ("Confident-GNMax, semi-supervised (VAT)", confident(n), semi, queries, 1, "random"),
        ("Confident-GNMax, self-training", confident(n), self_training, queries, 1, "random"),
        ("Confident-GNMax, supervised", confident(n), supervised, more, 1, "random"),
        ("Confident-GNMax, uncertainty, 3 rounds", confident(n), supervised, queries, 3, "uncertainty"),
        ("Confident-GNMax, uncertainty, 3 rounds", confident(n), supervised, more, 3, "uncertainty"),
        (
            "Interactive-GNMax, 2 rounds, semi-supervised",
            InteractiveGNMax(threshold=0.4 * n, sigma_threshold=0.4 * n, sigma=0.16 * n, confidence=0.9),
            semi, queries, 2, "random",
        ),
        # What these teachers allow at best: their plurality on every public row, no noise.
        ("plurality of all 5,000 public rows (non-private)", Plurality(), supervised, None, 1, "random"),
    ]  # fmt: skip
    pate = PATEClassifier(
        make_cnn(**TEACHER), n_teachers=n, classes=CLASSES, delta=1e-5, warm_start=True, n_jobs=args.n_jobs
    )
    header = (
        f"{'setting':49s} {'queries':>7s} {'answered':>8s} {'eps pub':>8s} {'eps dd*':>8s} {'eps (san)':>9s} "
        f"{'label acc':>9s} {'student':>15s} {'fit s':>6s}"
    )
    print(
        f"\nFashion-MNIST, {n} CNN teachers, delta=1e-5; teachers trained once (first fit: "
        f"'fit s' includes them), then reused; mean over {args.seeds} draws of queries, noise and student"
    )
    print(header)
    print("-" * len(header))
    published = {}  # eps pub (rounded for grouping) -> (eps pub, [private PATE rows with it])
    for name, aggregator, student, max_queries, n_rounds, strategy in settings:
        rows = []
        for seed in range(args.seeds):
            pate.set_params(
                aggregator=aggregator, student=student, max_queries=max_queries, n_rounds=n_rounds,
                query_strategy=strategy, random_state=seed,
            )  # fmt: skip
            start = time.perf_counter()
            pate.fit(X, y, X_public=X_public)
            seconds = time.perf_counter() - start
            answered = pate.public_labels_ != -1
            report = pate.privacy_report_
            sanitized = np.nan if report.sanitized_epsilon is None else report.sanitized_epsilon
            rows.append((
                pate.n_answered_, report.epsilon, report.data_dependent_epsilon, sanitized,
                np.mean(pate.public_labels_[answered] == y_public[answered]), pate.score(X_eval, y_eval), seconds,
            ))  # fmt: skip
        answered, eps, eps_dd, eps_san, label_accuracy, student, seconds = np.array(rows).T
        print(
            f"{name:49s} {pate.n_queries_:7d} {answered.mean():8.0f} {eps.mean():8.2f} {eps_dd.mean():8.2f} "
            f"{eps_san.mean():9.2f} {label_accuracy.mean():9.3f} {student.mean():8.4f}+-{student.std():.4f} "
            f"{seconds.max():6.0f}",
            flush=True,
        )
        if np.isfinite(eps.mean()) and not isinstance(aggregator, Plurality):
            published.setdefault(round(eps.mean(), 3), (eps.mean(), []))[1].append(f"{name} ({pate.n_queries_})")

    # Upper bounds for any student of this pool: true labels instead of noisy ones. The VAT row asks
    # whether semi-supervision can help here at all, with clean labels.
    partly_labeled = np.where(np.arange(len(y_public)) < queries, y_public, -1)
    for name, student, X_fit, y_fit in [
        (f"oracle: CNN student on {queries} true public labels", supervised, X_public[:queries], y_public[:queries]),
        (f"oracle: same + VAT on the other {len(y_public) - queries:,} rows", semi, X_public, partly_labeled),
        ("oracle: CNN student on all 5,000 true public labels", supervised, X_public, y_public),
    ]:
        start = time.perf_counter()
        oracle = clone(student).set_params(random_state=0).fit(X_fit, y_fit)
        print(
            f"{name:49s} {'':7s} {'':8s} {'inf':>8s} {'inf':>8s} {'':9s} {1.0:9.3f} "
            f"{oracle.score(X_eval, y_eval):8.4f}{'':8s} {time.perf_counter() - start:6.0f}",
            flush=True,
        )
    start = time.perf_counter()
    baseline = make_cnn(**{**STUDENT, "max_epochs": 8}, random_state=0).fit(X, y)
    print(
        f"{'non-private CNN on all 60,000 images':49s} {'':7s} {'':8s} {'inf':>8s} {'inf':>8s} {'':9s} {'':9s} "
        f"{baseline.score(X_eval, y_eval):8.4f}{'':8s} {time.perf_counter() - start:6.0f}"
    )
    print("eps pub: the epsilon to publish (a-priori bound); eps dd*: the papers' data-dependent epsilon, computed")
    print("from the private votes (do not publish); eps (san): its sanitized release, if any (PATE 2018 App. B).")
    print("Student accuracy on the second half of")
    print("the test set (mean+-std over draws); label acc: noisy labels vs true labels on the answered queries.")
    if args.peers:
        peers(args, published, X, y, X_eval, y_eval)


def peers(args, published, X, y, X_eval, y_eval):
    """The DP-SGD CNN peer at the publishable epsilons of the private PATE rows (or ``--peer-epsilons``)."""
    from fashion_peers import DPSGD, evaluate, print_table

    if args.peer_epsilons:
        epsilons = {eps: ["--peer-epsilons"] for eps in args.peer_epsilons}
    else:
        epsilons = dict(sorted(published.values(), key=lambda item: item[0]))
    hyper = {} if args.peer_epochs is None else {"epochs": args.peer_epochs}
    settings = {**DPSGD, **hyper}
    print(
        f"\nDP-SGD peer (fashion_peers.py: Opacus, tanh CNN, {settings}), trained on the same "
        f"{len(y)} private images, delta 1e-5, noise calibrated a priori to each publishable epsilon "
        f"(PRV accountant); {args.peer_seeds} seeds; accuracy on the same evaluation images"
    )
    for eps, rows in epsilons.items():
        print(f"  eps pub {eps:.3g}: {'; '.join(rows)}")
    results = evaluate(X, y, X_eval, y_eval, list(epsilons), args.peer_seeds, 1e-5, **hyper)
    print_table(results, "DP-SGD tanh CNN peer at publishable epsilon")


if __name__ == "__main__":
    main()
