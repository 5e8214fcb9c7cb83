"""Paired draws on Fashion-MNIST: is a student setting measurably better than the plain one?

The setting of ``fashion_mnist.py``: 250 CNN teachers, trained once;
Confident-GNMax 200/150/40 on 700 public queries (eps (dd) about 1.9,
delta 1e-5). Each draw fixes the random state (queries, noise, student
seed) and fits the plain PATE student and a variant with it:

* ``vat``: the same answers (asserted: exactly the same epsilon) train a
  supervised and a VAT student;
* ``uncertainty``: 700 random queries in one round against 700 queries in
  3 rounds chosen where the student is least sure (the epsilons differ:
  both are printed).

Prints each draw and the running mean accuracy difference (variant - plain)
with its standard error and t statistic.

Run: ``python benchmarks/paired_gain.py vat [--draws 20]`` (about 3.5
minutes per draw on 2 cores, plus 4 for the teachers) or ``... uncertainty``
(about 1 minute per draw).
"""

import argparse
import time

import numpy as np
from fashion_mnist import CLASSES, STUDENT, TEACHER, confident, load

from skpate import PATEClassifier
from skpate.nets import make_cnn

#: name -> (plain, variant) parameters of PATEClassifier
COMPARISONS = {
    "vat": (dict(student=make_cnn(**STUDENT)), dict(student=make_cnn(**STUDENT, semi_supervised=True))),
    "uncertainty": (dict(n_rounds=1, query_strategy="random"), dict(n_rounds=3, query_strategy="uncertainty")),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("comparison", choices=sorted(COMPARISONS))
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--teachers", type=int, default=250)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    X, y, X_public, _, X_eval, y_eval = load()
    pate = PATEClassifier(
        make_cnn(**TEACHER), n_teachers=args.teachers, aggregator=confident(args.teachers),
        student=make_cnn(**STUDENT), max_queries=700, classes=CLASSES, delta=1e-5, warm_start=True,
        n_jobs=args.n_jobs,
    )  # fmt: skip
    print(
        f"{args.comparison}: plain | variant (eps dd / di / san, answered, student accuracy), "
        "difference, running mean +- standard error, t"
    )
    differences = []
    for draw in range(args.draws):
        rows, start = [], time.perf_counter()
        for params in COMPARISONS[args.comparison]:
            pate.set_params(**params, random_state=draw).fit(X, y, X_public=X_public)
            report = pate.privacy_report_
            eps = f"{report.data_dependent_epsilon:.2f}/{report.epsilon:.2f}/{report.sanitized_epsilon:.2f}"
            rows.append((eps, pate.n_answered_, pate.score(X_eval, y_eval), pate.public_labels_))
        if args.comparison == "vat" and not np.array_equal(rows[0][3], rows[1][3]):
            raise RuntimeError("the two students did not get the same answers")
        differences.append(rows[1][2] - rows[0][2])
        mean = np.mean(differences)
        error = np.std(differences, ddof=1) / np.sqrt(len(differences)) if draw else np.nan
        print(
            f"{draw:3d}  {rows[0][0]} {rows[0][1]:4d} {rows[0][2]:.4f} | {rows[1][0]} {rows[1][1]:4d} {rows[1][2]:.4f}"
            f"  {differences[-1]:+.4f}  {mean:+.4f} +- {error:.4f}  t={mean / error:5.2f}"
            f"  ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
