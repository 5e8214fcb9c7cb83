"""Is the VAT student measurably better than the supervised one? Paired draws on Fashion-MNIST.

The setting of ``fashion_mnist.py``: 250 CNN teachers, trained once;
Confident-GNMax 200/150/40 on 700 random public queries (eps (dd) about
1.9, delta 1e-5). Each draw fixes the queries, the noise and the student's
seed, then trains both students on the same answers (so at exactly the same
epsilon): a paired comparison. Prints each draw and the running mean
difference with its standard error and t statistic.

Run: ``python benchmarks/semi_supervised_gain.py [--draws 20]`` (about 3.5
minutes per draw on 2 cores, plus 4 for the teachers).
"""

import argparse
import time

import numpy as np
from fashion_mnist import STUDENT, TEACHER, confident, load

from skpate import PATEClassifier
from skpate.nets import make_cnn


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--teachers", type=int, default=250)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    X, y, X_public, _, X_eval, y_eval = load()
    pate = PATEClassifier(
        make_cnn(**TEACHER), n_teachers=args.teachers, aggregator=confident(args.teachers), max_queries=700,
        delta=1e-5, warm_start=True, n_jobs=args.n_jobs,
    )  # fmt: skip
    print(f"{'draw':>4s} {'answered':>8s} {'eps (dd)':>8s} {'plain':>7s} {'VAT':>7s} {'VAT-plain':>9s} "
          f"{'mean diff +- s.e.':>18s} {'t':>6s} {'VAT s':>6s}")  # fmt: skip
    differences = []
    for draw in range(args.draws):
        scores, labels = [], []
        for student in (make_cnn(**STUDENT), make_cnn(**STUDENT, semi_supervised=True)):
            start = time.perf_counter()
            pate.set_params(student=student, random_state=draw).fit(X, y, X_public=X_public)
            scores.append(pate.score(X_eval, y_eval))
            labels.append(pate.public_labels_)
        if not np.array_equal(*labels):
            raise RuntimeError("the two students did not get the same answers")
        differences.append(scores[1] - scores[0])
        mean = np.mean(differences)
        error = np.std(differences, ddof=1) / np.sqrt(len(differences)) if draw else np.nan
        print(
            f"{draw:4d} {pate.n_answered_:8d} {pate.privacy_spent_[0]:8.2f} {scores[0]:7.4f} {scores[1]:7.4f} "
            f"{differences[-1]:+9.4f} {mean:+9.4f} +- {error:.4f} {mean / error:6.2f} "
            f"{time.perf_counter() - start:6.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
