"""The recipe on UCI Adult over many seeds: how much of a 3-seed margin is the draw.

``make_tabular_pate(adult_encoder(), epsilon=eps)`` on the papers' split
(``benchmarks/adult.py``'s protocol: 250 forest teachers, public pool = the
first half of adult.test, evaluation = the second half, delta 1e-5), seeds
``--first`` to ``--last`` - 1, each seed's teachers trained once and reused
across budgets (``warm_start``). The spread of the recipe at epsilon 0.5 and
1 (about half a point) is as large as its margins to DP-SGD, so means need
many seeds; this script runs the recipe alone (``adult.py --seeds 10`` runs
every row and peer, and gives the same recipe numbers for the same seeds).

``--default``: ``PATEClassifier(forest, epsilon=eps)`` with nothing else set
(``adult.py``'s default row) instead of the recipe. ``--teachers N`` (or
``auto``, :func:`skpate.teachers_for_budget`) and ``--vote-threshold t``
(``adult_sweep.py``'s teachers) change the recipe's teachers.

Run: ``python benchmarks/adult_recipe_seeds.py --last 10 --epsilons 0.5 1 2 4 [--default]`` (about 2 minutes per
seed and budget pair on 2 cores; ``benchmarks/results/adult_recipe_seeds.txt``).
"""

import argparse
import time

import numpy as np
from adult import CLASSES, forest  # benchmarks/adult.py, next to this script: label set, the papers' teacher
from adult_sweep import teacher  # benchmarks/adult_sweep.py: the papers' teacher with a public vote threshold

from skpate import PATEClassifier, make_tabular_pate
from skpate.datasets import adult_encoder, adult_papers_split


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--last", type=int, default=10)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--default", action="store_true", help="PATEClassifier(forest, epsilon=eps) with nothing else set (adult.py's "
        "default row) instead of the recipe",
    )  # fmt: skip
    parser.add_argument(
        "--teachers", type=lambda value: value if value == "auto" else int(value), default=250,
        help='n_teachers of the recipe (an integer or "auto")',
    )  # fmt: skip
    parser.add_argument(
        "--vote-threshold", type=float, default=0.5, help="P(>50K) from which a recipe teacher votes >50K "
        "(adult_sweep.py's teacher)",
    )  # fmt: skip
    args = parser.parse_args()
    data, start = adult_papers_split(), time.perf_counter()
    scores = {epsilon: [] for epsilon in args.epsilons}
    for seed in range(args.first, args.last):
        common = dict(classes=CLASSES, random_state=seed, n_jobs=args.n_jobs, warm_start=True)
        if args.default:
            pate = PATEClassifier(forest(seed), epsilon=args.epsilons[0], **common)
        else:
            pate = make_tabular_pate(adult_encoder(), epsilon=args.epsilons[0], n_teachers=args.teachers, **common)
            if args.vote_threshold != 0.5:  # else the recipe's own teacher
                pate.set_params(estimator=teacher(args.vote_threshold))
        for epsilon in args.epsilons:
            pate.set_params(epsilon=epsilon).fit(data.X_private, data.y_private, X_public=data.X_public)
            scores[epsilon].append(pate.score(data.X_eval, data.y_eval))
            print(f"seed {seed} epsilon {epsilon:g}: {scores[epsilon][-1]:.4f}, {pate.n_queries_} queries "
                  f"({time.perf_counter() - start:.0f}s)", flush=True)  # fmt: skip
    name = "PATEClassifier(forest, epsilon=eps)" if args.default else "recipe"
    if not args.default and (args.teachers, args.vote_threshold) != (250, 0.5):
        name += f" with {args.teachers} teachers, vote threshold {args.vote_threshold:g}"
    print(f"\n{name} on UCI Adult, seeds {args.first}-{args.last - 1}, delta 1e-5 (publishable epsilon = the budget)")
    for epsilon, values in scores.items():
        print(f"epsilon {epsilon:g}: {np.mean(values):.4f} +- {np.std(values):.4f} (min {np.min(values):.4f}, "
              f"max {np.max(values):.4f}, {len(values)} seeds)")  # fmt: skip


if __name__ == "__main__":
    main()
