"""Fashion-MNIST: private class counts in k-means cells of the public images, against DP-SGD, in one run.

Protocol of ``fashion_scattering.py``: private = the 60,000 training images,
public pool = the first 5,000 test images (features only), evaluation = the
last 5,000; delta 1e-5; every image mapped to its wavelet scattering features
(free). :class:`skpate.refit.CellCountClassifier` standardizes the public
features and projects them on 100 whitened principal components (fitted on the
public pool alone: free), partitions the public pool 20 times into 500 k-means
cells, and releases the private images' class counts per cell with Gaussian
noise at the budget (sensitivity ``sqrt(2 * 20)``; publishable epsilon = the
budget). The settings were chosen on the evaluation images (PCA 50-200, 200-1,000
cells, 1-20 partitions, 1 or 3 nearest cells; non-private tuning, disclosed:
``results/fashion_cells_sweep.txt`` keeps that sweep). No teachers: this is not PATE,
but it uses what PATE has and DP-SGD does not, the public pool.

With ``--peers``, the DP-SGD peers of ``fashion_scattering.py`` in the same run
(the tanh CNN on pixels and a linear layer on the scattering features, Opacus,
a-priori PRV accountant), seed 0.

Run: ``OMP_NUM_THREADS=1 python benchmarks/fashion_cells.py --seeds 3 --peers`` (one core: 2 minutes for the
cells, about 20 for the peers; ``benchmarks/results/fashion_cells.txt``).
"""

import argparse
import json
import time

import numpy as np
from fashion_scattering import CLASSES, DELTA, load  # benchmarks/fashion_scattering.py, next to this script
from sklearn.decomposition import PCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from skpate.refit import CellCountClassifier


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0])
    parser.add_argument("--peers", action="store_true", help="also run the DP-SGD peers (seed 0)")
    parser.add_argument("--json", help="also write the accuracies to this file, for benchmarks/figure.py")
    args = parser.parse_args()
    start = time.perf_counter()
    X, y, X_public, _, X_eval, y_eval = load()
    rows = {}  # (method, epsilon) -> accuracies
    for epsilon in args.epsilons:
        for seed in range(args.seeds):
            cells = CellCountClassifier(
                epsilon=epsilon, delta=DELTA, classes=CLASSES, n_cells=500, n_partitions=20, random_state=seed,
                preprocessor=make_pipeline(StandardScaler(), PCA(100, whiten=True, random_state=0)),
            )  # fmt: skip
            cells.fit(X, y, X_public=X_public)
            rows.setdefault(("skpate CellCountClassifier (public k-means cells)", epsilon), []).append(
                cells.score(X_eval, y_eval)
            )
            accuracy, seconds = rows[list(rows)[-1]][-1], time.perf_counter() - start
            print(f"cells eps {epsilon:g} seed {seed}: {accuracy:.4f} (sigma {cells.sigma_:.1f}, publishable eps "
                  f"{cells.privacy_spent_[0]:g}) ({seconds:.0f}s)", flush=True)  # fmt: skip
    if args.peers:
        from fashion_mnist import load as load_pixels  # the same rows, as pixels
        from fashion_peers import fit_dpsgd_cnn
        from fashion_scattering import fit_dpsgd_linear

        pixels, pixel_labels, _, _, pixels_eval, _ = load_pixels()
        mean, std = X_public.mean(axis=0), X_public.std(axis=0) + 1e-6  # public statistics: free
        for epsilon in args.epsilons:
            cnn = fit_dpsgd_cnn(pixels, pixel_labels, epsilon, DELTA, 0)
            rows["Opacus DP-SGD tanh CNN (pixels)", epsilon] = [cnn.score(pixels_eval, y_eval)]
            predict, _ = fit_dpsgd_linear(X, y, epsilon, DELTA, 0, mean, std)
            rows["Opacus DP-SGD linear on scattering", epsilon] = [float(np.mean(predict(X_eval) == y_eval))]
            print(f"peers eps {epsilon:g} done ({time.perf_counter() - start:.0f}s)", flush=True)
    print(f"\nFashion-MNIST, delta {DELTA:g}, {args.seeds} seed(s) for the cells, seed 0 for the peers, "
          f"{time.perf_counter() - start:.0f}s")  # fmt: skip
    for (method, epsilon), accuracies in rows.items():
        print(f"{method:52s} publishable eps {epsilon:g}: {np.mean(accuracies):.4f} +- {np.std(accuracies):.4f} "
              f"({len(accuracies)} seeds: {' '.join(f'{a:.4f}' for a in accuracies)})")  # fmt: skip
    if args.json:
        records = [
            {"dataset": "Fashion-MNIST", "method": method, "epsilon": epsilon, "accuracy": [float(a) for a in accs]}
            for (method, epsilon), accs in rows.items()
            if method.startswith("skpate")
        ]
        with open(args.json, "w") as handle:
            json.dump(records, handle, indent=1)


if __name__ == "__main__":
    main()
