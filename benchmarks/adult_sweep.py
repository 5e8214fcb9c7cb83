"""Where the accuracy at a publishable epsilon goes on UCI Adult: noise and students, teachers trained once.

250 random-forest teachers are trained once per seed (``warm_start``: later fits
reuse them and the votes they already cast); each row is a budget-first fit
(``epsilon=...``) with GNMax at ``sigma = n_teachers / k`` for several ``k``, or
Confident-GNMax under a filter, and one of several students. Every epsilon
printed is publishable (the budget). The settings are compared on the
evaluation half: that is non-private tuning, disclosed as such.

Run: ``python benchmarks/adult_sweep.py [--seeds 1] [--epsilons 1 2]`` (about 10 minutes per seed on 2 cores).
"""

import argparse
import itertools
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skpate import ConfidentGNMax, GNMax, PATEClassifier
from skpate.datasets import ADULT_CATEGORICAL, ADULT_CATEGORIES, adult_encoder, adult_papers_split

CLASSES = ["<=50K", ">50K"]


def students(seed):
    one_hot = OneHotEncoder(categories=[ADULT_CATEGORIES[c] for c in ADULT_CATEGORICAL], handle_unknown="ignore")
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import StandardScaler

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
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args()
    data = adult_papers_split()
    n = 250
    rows = {}
    for seed in range(args.seeds):
        teacher = make_pipeline(adult_encoder(), RandomForestClassifier(n_estimators=100, max_features=None))
        pate = PATEClassifier(teacher, n_teachers=n, classes=CLASSES, warm_start=True, n_jobs=args.n_jobs)
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
                    key = (epsilon, name, student_name)
                    rows.setdefault(key, []).append(
                        (pate.privacy_spent_[0], pate.n_queries_, pate.score(data.X_eval, data.y_eval))
                    )
                    print(
                        f"seed {seed} eps {epsilon:g} {name:30s} {student_name:42s} queries {pate.n_queries_:5d} "
                        f"student {rows[key][-1][2]:.4f} ({time.perf_counter() - start:.0f}s)",
                        flush=True,
                    )
    print(f"\nUCI Adult, 250 forest teachers, delta 1e-5, mean over {args.seeds} seeds (publishable epsilon)")
    for (epsilon, name, student_name), runs in rows.items():
        runs = np.array(runs)
        print(
            f"eps {epsilon:g} {name:30s} {student_name:42s} queries {runs[:, 1].mean():6.0f} "
            f"student {runs[:, 2].mean():.4f} +- {runs[:, 2].std():.4f}"
        )


if __name__ == "__main__":
    main()
