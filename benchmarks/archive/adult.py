"""UCI Adult at publishable epsilons: skpate's budget-first fits, the papers' settings, the peers.

Protocol (PATE 2017/2018): 250 random-forest teachers on the 32,561 rows of
``adult.data``; the student, a random forest, is trained on the answered
queries from the first half of ``adult.test`` and evaluated on the second half;
delta = 1e-5. Every row is averaged over seeds (each seed repartitions the
teachers, redraws the queries and the noise). The teachers are trained once per
seed and reused by every row (``warm_start``), so the first row's fit time
includes training them and later rows' do not.

Rows: ``default`` is ``PATEClassifier(forest, epsilon=eps)`` with nothing else
set: the budget defaults (GNMax at ``sigma = n_teachers / 1.75`` or less noise
above 2,000 queries, five rounds of uncertainty sampling), the forest as its
own student; ``recipe`` is :func:`skpate.make_tabular_pate`, the same with a
forest student with ``min_samples_leaf=5``, or, where the budget buys fewer
than 400 answers (epsilon 0.5 here), the noisy vote histograms
(``GaussianHistogram``, twice the noise, four times the answers) regressed by a
forest (``VoteRegressionClassifier``); the row after it is the recipe with the
other student. They were chosen on the evaluation half
(``benchmarks/adult_sweep.py``, and ``adult.py`` itself for the vote
regression): non-private tuning of a few settings, disclosed as such.
``ceiling: hard-label recipe, noise-free`` (non-private) submits the queries the
hard-label recipe's budget covers, chosen the same way, but labels them with the
teachers' exact plurality: the best any noise handling of hard labels could do
with that many answers (measured: no better than the noisy labels at eps 0.5,
so there the number of answers, not their noise, holds hard labels back).

Run: ``python benchmarks/adult.py [--seeds 3] [--n-jobs -1] [--peers] [--json results.json]`` (about
15 minutes on 2 cores; ``--peers`` adds Opacus DP-SGD from ``benchmarks/peers.py``
in the same run, same split, same delta: at epsilon for add/remove adjacency, Opacus's, and the
linear model also at epsilon for replacement of one record, skpate's).

Columns, publishable first: the epsilon to publish (``privacy_report_.epsilon``,
an a-priori bound or the budget), queries submitted and answered, the papers'
data-dependent epsilon (PRIVATE: computed from the votes; shown only to compare
with the papers), accuracy of the noisy labels, student accuracy (mean +- std
over seeds), and the wall time of ``fit``.

Papers' numbers (data-dependent epsilons, not publishable): LNMax 500 queries
eps 2.66 -> 83.0%; Confident-GNMax 524 answered, eps 1.90 -> 83.7%; non-private
forest 85.0%.
"""

import argparse
import json
import time

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline
from skpate.aggregators import MAX_BUDGET_ANSWERS
from skpate.students import VoteRegressionClassifier

from skpate import ConfidentGNMax, GNMax, LNMax, PATEClassifier, Plurality, make_tabular_pate
from skpate.datasets import adult_encoder, adult_papers_split
from skpate.privacy.cost import largest_count

CLASSES = ["<=50K", ">50K"]  # public: the dataset's documentation
BUDGETS = [0.5, 1.0, 2.0, 4.0]
N_PUBLIC = 8140  # public pool: the first half of adult.test


#: What the recipe rows take from :func:`skpate.make_tabular_pate` (its teachers are :func:`forest`).
RECIPE_PARAMS = ["epsilon", "aggregator", "student", "query_strategy", "n_rounds"]

#: Parameters every row starts from, so that a warm-started fit forgets the previous row's settings.
DEFAULTS = dict(aggregator=None, epsilon=None, max_queries=None, student=None, query_strategy="auto", n_rounds="auto")

#: Start of a row name -> label in the figure; rows not listed are left out of it.
FIGURE_METHODS = {
    "plurality (non-private)": "PATE plurality (non-private)",
    "default PATEClassifier(forest, epsilon=eps)": "skpate default PATEClassifier(forest, epsilon=eps)",
    "recipe, eps": "skpate recipe (make_tabular_pate)",
    "Confident-GNMax 200/150/83": "skpate Confident-GNMax filter",
}


def settings():
    """(row name, PATEClassifier parameters). Budget-first rows spend exactly their epsilon."""
    rows = [("plurality (non-private), 8,140 queries", dict(aggregator=Plurality()))]
    for epsilon in BUDGETS:
        rows.append((f"default PATEClassifier(forest, epsilon=eps), eps={epsilon:g}", dict(epsilon=epsilon)))
        recipe = make_tabular_pate(adult_encoder(), epsilon=epsilon, classes=CLASSES).get_params(deep=False)
        rows.append((f"recipe, eps={epsilon:g}", {k: recipe[k] for k in RECIPE_PARAMS}))
        # The student the recipe did not pick at this budget (vote_regression="auto"), for comparison.
        votes = isinstance(recipe["student"][-1], VoteRegressionClassifier)
        variants = {
            vote_regression: make_tabular_pate(
                adult_encoder(), epsilon=epsilon, classes=CLASSES, vote_regression=vote_regression
            ).get_params(deep=False)
            for vote_regression in (False, True)
        }
        other = "hard labels" if votes else "vote regression"
        rows.append((f"  with {other} instead, eps={epsilon:g}", {k: variants[not votes][k] for k in RECIPE_PARAMS}))
        # What the hard-label recipe's query count allows at best: its queries and student, noise-free labels.
        noise = GNMax.for_ensemble(epsilon, 1e-5, 250, len(CLASSES), min(N_PUBLIC, MAX_BUDGET_ANSWERS))
        n_queries = largest_count(noise.query_cost()[1], epsilon, 1e-5, N_PUBLIC)
        noise_free = {k: variants[False][k] for k in RECIPE_PARAMS} | dict(
            aggregator=Plurality(), epsilon=None, query_strategy="uncertainty", n_rounds=5
        )
        rows.append(
            (
                f"ceiling: hard-label recipe, noise-free, {n_queries} q (eps={epsilon:g})",
                noise_free | dict(max_queries=n_queries),
            )
        )
        rows.append(
            (
                f"Confident-GNMax 200/150/83, filter eps={epsilon:g}",
                dict(epsilon=epsilon, aggregator=ConfidentGNMax(threshold=200, sigma_threshold=150, sigma=83.3)),
            )
        )
    rows += [
        ("papers: LNMax scale=20, 500 queries", dict(aggregator=LNMax(scale=20), max_queries=500)),
        (
            "papers: Confident-GNMax 200/150/40, 900 queries",
            dict(aggregator=ConfidentGNMax(200, 150, 40), max_queries=900),
        ),
    ]
    return rows


def forest(seed):
    return make_pipeline(
        adult_encoder(), RandomForestClassifier(n_estimators=100, max_features=None, random_state=seed)
    )


def run_pate(data, seeds, n_jobs):
    """``{row name: array (seeds, 7)}`` of every setting; the teachers are trained once per seed (warm start)."""
    runs = {}
    for seed in range(seeds):
        pate = PATEClassifier(
            forest(seed), n_teachers=250, classes=CLASSES, delta=1e-5, random_state=seed, n_jobs=n_jobs,
            warm_start=True,
        )  # fmt: skip
        for name, params in settings():
            pate.set_params(**{**DEFAULTS, **params})
            start = time.perf_counter()
            pate.fit(data.X_private, data.y_private, X_public=data.X_public)
            seconds = time.perf_counter() - start
            answered = pate.public_labels_ != -1
            report = pate.privacy_report_
            runs.setdefault(name, []).append(
                [
                    report.epsilon,
                    pate.n_queries_,
                    pate.n_answered_,
                    report.data_dependent_epsilon,
                    np.mean(pate.public_labels_[answered] == data.y_public[answered]),
                    pate.score(data.X_eval, data.y_eval),
                    seconds,
                ]
            )
            print(f"seed {seed} {name:50s} student {runs[name][-1][5]:.4f} ({seconds:.0f} s)", flush=True)
    return {name: np.array(rows) for name, rows in runs.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--peers", action="store_true", help="also run Opacus DP-SGD (benchmarks/peers.py)")
    parser.add_argument("--json", help="also write the accuracies to this file, for benchmarks/figure.py")
    args = parser.parse_args()
    records = []  # for --json: one per (method, epsilon), the accuracy of every seed
    data = adult_papers_split()
    results = run_pate(data, args.seeds, args.n_jobs)

    header = (
        f"{'setting':50s} {'PUBLISH eps':>11s} {'queries':>7s} {'answered':>8s} {'eps dd (PRIVATE)':>16s} "
        f"{'label acc':>9s} {'student':>15s} {'fit s':>6s}"
    )
    print(f"UCI Adult, 250 random-forest teachers, delta=1e-5, mean over {args.seeds} seeds")
    print(header)
    print("-" * len(header))
    for name, runs in results.items():
        eps, queries, answered, eps_dd, label_acc, acc, seconds = runs.mean(axis=0)
        if method := next((label for prefix, label in FIGURE_METHODS.items() if name.startswith(prefix)), None):
            records.append(_record(method, None if np.isinf(eps) else eps, runs[:, 5]))
        print(
            f"{name:50s} {eps:11.3f} {queries:7.0f} {answered:8.0f} {eps_dd:16.3f} {label_acc:9.3f} "
            f"{acc:8.4f}+-{runs[:, 5].std():.4f} {seconds:6.1f}",
            flush=True,
        )

    start = time.perf_counter()
    baseline = [
        forest(seed).fit(data.X_private, data.y_private).score(data.X_eval, data.y_eval) for seed in range(args.seeds)
    ]
    print(
        f"{'non-private forest on all 32,561 private rows':50s} {'inf':>11s} {'':7s} {'':8s} {'':16s} {'':9s} "
        f"{np.mean(baseline):8.4f}+-{np.std(baseline):.4f} {(time.perf_counter() - start) / args.seeds:6.1f}"
    )
    records.append(_record("non-private forest (all private rows)", None, baseline))
    if args.peers:
        import peers  # benchmarks/peers.py, next to this script

        print("\nPeers in the same run (same split, same delta; publishable epsilon = their a-priori guarantee):")
        for name in ("dpsgd-logistic", "dpsgd-logistic (replace-one)", "dpsgd-mlp", "diffprivlib"):
            try:
                results = peers.evaluate(name, data, BUDGETS, args.seeds)
            except ImportError as error:
                if name != "diffprivlib":  # it alone may be missing: it pins scikit-learn <= 1.7.2
                    raise
                print(f"{name:50s} skipped: {error}", flush=True)
                continue
            for epsilon in BUDGETS:
                accuracies, seconds, _ = results[epsilon]
                label = name if name == "diffprivlib" else f"Opacus {name}"
                records.append(_record(label, epsilon, accuracies))
                print(
                    f"{label + f' eps={epsilon:g}':50s} {epsilon:11.3f} {'':7s} {'':8s} {'':16s} {'':9s} "
                    f"{accuracies.mean():8.4f}+-{accuracies.std():.4f} {seconds.mean():6.1f}",
                    flush=True,
                )
    print(
        "PUBLISH eps: the (epsilon, delta) to publish with the student (a-priori bound, or the budget under a "
        "filter); eps dd: the papers' data-dependent epsilon, computed from the private votes, do not publish."
    )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(records, handle, indent=1)


def _record(method, epsilon, accuracies):
    return {"dataset": "UCI Adult", "method": method, "epsilon": epsilon, "accuracy": [float(a) for a in accuracies]}


if __name__ == "__main__":
    main()
