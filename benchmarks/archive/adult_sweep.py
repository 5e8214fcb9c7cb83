"""Where the accuracy at a publishable epsilon goes on UCI Adult: noise and students, teachers trained once.

Random-forest teachers (250 unless ``--teachers``) are trained once per seed and
teacher setting (``warm_start``: later fits reuse them and the votes they already
cast); each row is a budget-first fit
(``epsilon=...``) with GNMax at ``sigma = n_teachers / k`` for several ``k``, or
Confident-GNMax under a filter, and one of several students. Every epsilon
printed is publishable (the budget). The settings are compared on the
evaluation half: that is non-private tuning, disclosed as such.

``--vote-thresholds t ...`` makes each teacher vote ``>50K`` when its forest gives
that class a probability of at least ``t`` (``FixedThresholdClassifier``; 0.5 is
the plain forest). Small forests lean to the majority class; a threshold below
0.5 is a public constant that corrects the lean, so it costs no privacy. The
table starts with each teacher setting's noise-free plurality on the public pool
(non-private; a diagnostic, what its votes know at best).

Run: ``python benchmarks/adult_sweep.py [--seeds 1] [--epsilons 1 2]`` (about 10 minutes per seed on 2 cores).
Teachers and thresholds with the recipe's student and queries (``benchmarks/results/adult_teachers.txt``, 40
minutes on one core): ``python benchmarks/adult_sweep.py --seeds 3 --epsilons 0.5 1 --teachers 250 500
--vote-thresholds 0.5 0.45 --divisors 1.75 2.5 --students "forest (min_samples_leaf=5)" --strategies uncertainty
--rounds 5 --no-confident --n-jobs 1``.
"""

import argparse
import itertools
import time

import numpy as np
from adult import CLASSES  # benchmarks/adult.py, next to this script: the public label set
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import FixedThresholdClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skpate import ConfidentGNMax, GNMax, PATEClassifier
from skpate.datasets import ADULT_CATEGORICAL, ADULT_CATEGORIES, adult_encoder, adult_papers_split


def students(seed):
    one_hot = OneHotEncoder(categories=[ADULT_CATEGORIES[c] for c in ADULT_CATEGORICAL], handle_unknown="ignore")
    logistic_features = ColumnTransformer([("cat", one_hot, ADULT_CATEGORICAL)], remainder=StandardScaler())
    return {
        "forest": make_pipeline(
            adult_encoder(), RandomForestClassifier(n_estimators=100, max_features=None, random_state=seed)
        ),
        "forest (min_samples_leaf=5)": make_pipeline(
            adult_encoder(), RandomForestClassifier(n_estimators=100, min_samples_leaf=5, random_state=seed)
        ),
        "forest (min_samples_leaf=10)": make_pipeline(
            adult_encoder(), RandomForestClassifier(n_estimators=100, min_samples_leaf=10, random_state=seed)
        ),
        "hist gradient boosting": make_pipeline(adult_encoder(), HistGradientBoostingClassifier(random_state=seed)),
        "logistic (one-hot, scaled)": make_pipeline(logistic_features, LogisticRegression(max_iter=2000)),
    }


def teacher(threshold):
    """The papers' forest teacher; below 0.5, it votes ``>50K`` from that class's probability ``threshold`` on."""
    forest = make_pipeline(adult_encoder(), RandomForestClassifier(n_estimators=100, max_features=None))
    if threshold == 0.5:
        return forest
    return FixedThresholdClassifier(forest, threshold=threshold, pos_label=CLASSES[1], response_method="predict_proba")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--divisors", type=float, nargs="+", default=[2, 3, 4, 6], help="sigma = n_teachers / k")
    parser.add_argument("--students", nargs="+", default=None, help="names of students to keep (default: all)")
    parser.add_argument("--no-confident", action="store_true")
    parser.add_argument(
        "--strategies", nargs="+", default=["random"], choices=["random", "uncertainty"], help="query_strategy values"
    )
    parser.add_argument("--rounds", type=int, default=3, help="n_rounds of the uncertainty strategy")
    parser.add_argument("--teachers", type=int, nargs="+", default=[250], help="values of n_teachers")
    parser.add_argument(
        "--vote-thresholds", type=float, nargs="+", default=[0.5], help="P(>50K) from which a teacher votes >50K"
    )
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args()
    data = adult_papers_split()
    rows, pluralities = {}, {}
    for seed, n, threshold in itertools.product(range(args.seeds), args.teachers, args.vote_thresholds):
        teachers = f"{n} teachers, vote threshold {threshold:g}"
        pate = PATEClassifier(
            teacher(threshold), n_teachers=n, classes=CLASSES, warm_start=True, n_jobs=args.n_jobs, random_state=seed
        )
        for epsilon in args.epsilons:
            aggregators = {f"GNMax sigma=n/{k:g}": GNMax(sigma=n / k) for k in args.divisors}
            if not args.no_confident:
                aggregators["Confident 200/150/83 (filter)"] = ConfidentGNMax(200, 150, n / 3)
            for name, aggregator in aggregators.items():
                for (student_name, student), strategy in itertools.product(students(seed).items(), args.strategies):
                    if args.students is not None and student_name not in args.students:
                        continue
                    start = time.perf_counter()
                    rounds = args.rounds if strategy == "uncertainty" else 1
                    pate.set_params(
                        aggregator=aggregator, student=student, epsilon=epsilon, random_state=seed,
                        query_strategy=strategy, n_rounds=rounds,
                    )  # fmt: skip
                    pate.fit(data.X_private, data.y_private, X_public=data.X_public)
                    if strategy != "random":
                        student_name = f"{student_name}, {strategy} x{rounds}"
                    key = (epsilon, teachers, name, student_name)
                    if len(pluralities.get(teachers, [])) == seed:  # this seed's first fit: the votes, noise-free
                        votes = pate.teachers_.votes(data.X_public, np.arange(len(data.y_public)))
                        plurality = np.asarray(CLASSES)[votes.argmax(axis=1)]
                        pluralities.setdefault(teachers, []).append(np.mean(plurality == data.y_public))
                    rows.setdefault(key, []).append(
                        (pate.privacy_spent_[0], pate.n_queries_, pate.score(data.X_eval, data.y_eval))
                    )
                    print(
                        f"seed {seed} {teachers} eps {epsilon:g} {name:30s} {student_name:42s} "
                        f"queries {pate.n_queries_:5d} student {rows[key][-1][2]:.4f} "
                        f"({time.perf_counter() - start:.0f}s)",
                        flush=True,
                    )
    print(f"\nUCI Adult, forest teachers, delta 1e-5, mean over {args.seeds} seeds (publishable epsilon)")
    for teachers, accuracies in pluralities.items():
        print(f"{teachers}: noise-free plurality on the public pool (non-private) {np.mean(accuracies):.4f}")
    for (epsilon, teachers, name, student_name), runs in rows.items():
        runs = np.array(runs)
        print(
            f"eps {epsilon:g} {teachers} {name:30s} {student_name:42s} queries {runs[:, 1].mean():6.0f} "
            f"student {runs[:, 2].mean():.4f} +- {runs[:, 2].std():.4f}"
        )


if __name__ == "__main__":
    main()
