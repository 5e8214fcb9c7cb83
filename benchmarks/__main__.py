"""Command line of the benchmarks: ``python -m benchmarks {suite,headline,run,table,figure,list}``.

``suite`` reruns the README's headline table and figure (the tabular suite);
``headline`` reruns the PATE headline on UCI Adult (docs/benchmarks/adult.md)
and redraws its privacy-utility figure; ``run`` runs any experiment of :data:`EXPERIMENTS`;
``table`` and ``figure`` recompute the table or the figure from recorded
results without fitting anything. See benchmarks/README.md.
"""

import argparse
import pathlib
import sys
import time

from . import adult, fashion, figure, harness, tabular

#: Every experiment the command line runs, by name.
EXPERIMENTS = {
    experiment.name: experiment
    for experiment in (
        adult.HEADLINE,
        adult.ONE_CALL_EXPERIMENT,
        adult.BOOSTING_EXPERIMENT,
        fashion.CELLS_EXPERIMENT,
        fashion.LINEAR_EXPERIMENT,
        fashion.CNN_EXPERIMENT,
    )
}

#: Where the full PATE headline run draws its figure (docs/benchmarks/adult.md shows it).
FIGURE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "images" / "privacy_utility.png"


def build_parser():
    """The argument parser (subcommands ``headline``, ``run``, ``table``, ``figure``, ``list``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def run_options(sub):
        sub.add_argument("--quick", action="store_true", help="the experiment's quick protocol (printed)")
        sub.add_argument("--seeds", type=int, help="seeds 0 .. N-1 (default: the experiment's)")
        sub.add_argument("--epsilons", type=float, nargs="+", help="budgets (default: the experiment's)")
        sub.add_argument("--n-jobs", type=int, default=2, help="workers for the teachers (default: 2)")
        sub.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True, help="run the DP-SGD peers")
        sub.add_argument("--out", type=pathlib.Path, help="directory of the records (default: results/, or "
                         "results/scratch/ for any protocol other than the full one)")  # fmt: skip

    headline = commands.add_parser(
        "headline", help="rerun the PATE headline on UCI Adult (docs/benchmarks/adult.md) and redraw its figure"
    )
    run_options(headline)
    headline.add_argument("--figure", type=pathlib.Path, help=f"where to draw the figure (default: {FIGURE} for the "
                          "full run, else privacy_utility.png next to the records)")  # fmt: skip
    headline.add_argument("--no-figure", action="store_true", help="do not draw the figure")
    run = commands.add_parser("run", help="run one experiment (see `list`)")
    run.add_argument("experiment", choices=sorted(EXPERIMENTS))
    run_options(run)
    table = commands.add_parser("table", help="print the table of recorded results (no fitting)")
    table.add_argument("records", type=pathlib.Path, nargs="+", help="JSON-lines record files")
    draw = commands.add_parser("figure", help="redraw the figure from benchmarks/results/ (no fitting)")
    draw.add_argument("-o", "--output", type=pathlib.Path, default=FIGURE)
    suite = commands.add_parser(
        "suite", help="the tabular suite (the README's table and figure): PrivateClassifier, DP-SGD peers, references"
    )
    group = suite.add_mutually_exclusive_group()
    group.add_argument("--holdout", action="store_true", help="the holdout data sets instead of the suite")
    group.add_argument("--development", action="store_true", help="the development data sets (defaults chosen there)")
    suite.add_argument("--quick", action="store_true", help="seed 0 and epsilon 1 only")
    suite.add_argument("--datasets", nargs="+", help="only these data sets")
    suite.add_argument("--methods", nargs="+", help="only these methods (names as recorded, e.g. "
                       f"'{tabular.BOOSTING}'; references included)")  # fmt: skip
    suite.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True, help="run the DP-SGD peers")
    suite.add_argument("--out", type=pathlib.Path, help="directory of the records (default: results/, or "
                       "results/scratch/ for any protocol other than the full one)")  # fmt: skip
    commands.add_parser("list", help="list the experiments")
    return parser


def protocol(experiment, args):
    """``(seeds, epsilons, full)`` of a run: the options, the quick protocol, or the experiment's defaults.

    Parameters
    ----------
    experiment : harness.Experiment
    args : argparse.Namespace

    Returns
    -------
    seeds : list of int
    epsilons : list of float
    full : bool
        Whether this is the full protocol (the one whose records live in ``benchmarks/results/``).
    """
    seeds = args.seeds or (experiment.quick_seeds if args.quick else experiment.seeds)
    epsilons = tuple(args.epsilons or (experiment.quick_epsilons if args.quick else experiment.epsilons))
    full = seeds == experiment.seeds and epsilons == tuple(experiment.epsilons) and args.peers and not args.quick
    return list(range(seeds)), list(epsilons), full


def header(experiment, seeds, epsilons, args, full):
    """What the run is, and what it changes from the full protocol."""
    lines = [
        experiment.summary,
        f"seeds {_seeds(seeds)}, publishable epsilons {' '.join(f'{e:g}' for e in epsilons)}, delta "
        f"{harness.DELTA:g}, n_jobs {args.n_jobs}, peers {'on' if args.peers else 'off'}",
    ]
    if not full:
        quick = f"QUICK: {experiment.quick_note}; " if args.quick and experiment.quick_note else ""
        lines.append(
            f"{'QUICK' if args.quick else 'PARTIAL'} RUN, not the recorded protocol: {quick}the full run has seeds "
            f"{_seeds(range(experiment.seeds))} and epsilons {' '.join(f'{e:g}' for e in experiment.epsilons)} "
            "with the peers; every other setting is the full run's"
        )
    return "\n".join(lines)


def _seeds(seeds):
    seeds = list(seeds)
    return str(seeds[0]) if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"


def versions():
    """The versions that decide the numbers: Python, skpate, scikit-learn, numpy, scipy (and torch if loaded)."""
    import platform
    import sys

    import numpy
    import scipy
    import sklearn

    import skpate

    found = {"python": platform.python_version(), "skpate": skpate.__version__, "scikit-learn": sklearn.__version__,
             "numpy": numpy.__version__, "scipy": scipy.__version__}  # fmt: skip
    if "torch" in sys.modules:
        found["torch"] = sys.modules["torch"].__version__
    return ", ".join(f"{name} {version}" for name, version in found.items())


def run_experiment(experiment, args, log=print):
    """Run ``experiment`` as the options say, write its records, print its table; returns (records, path, full)."""
    seeds, epsilons, full = protocol(experiment, args)
    out = args.out or (harness.RESULTS if full else harness.RESULTS / "scratch")
    path = pathlib.Path(out) / f"{experiment.name}.jsonl"
    log(header(experiment, seeds, epsilons, args, full))
    log(f"versions: {versions()}")  # forests grow differently across scikit-learn releases: say which ran
    log(f"records: {path}\n")
    start = time.perf_counter()
    records = experiment.run(seeds, epsilons, harness.RecordFile(path), n_jobs=args.n_jobs, peers=args.peers, log=log)
    log(f"\n{header(experiment, seeds, epsilons, args, full)}")
    log(f"wall time {(time.perf_counter() - start) / 60:.1f} minutes; records: {path}")
    log(harness.format_table(records, experiment.differences))
    recorded = harness.RESULTS / f"{experiment.name}.jsonl"
    if not full and recorded.exists() and recorded.resolve() != path.resolve():
        same = {(r["method"], r["epsilon"], r["seed"]) for r in records}
        earlier = [r for r in harness.read_records(recorded) if (r["method"], r["epsilon"], r["seed"]) in same]
        if earlier:
            log(f"\nThe recorded full run ({recorded.name}) on the same methods, seeds and budgets:")
            log(harness.format_table(earlier, experiment.differences))
    return records, path, full


def run_suite(args, log=print):
    """Run the tabular suite (or its holdout) as the options say, write its records, print its summary."""
    from . import tabular_data

    group = "holdout" if args.holdout else "development" if args.development else "suite"
    names = args.datasets or {"holdout": tabular_data.HOLDOUT, "development": tabular_data.ALL_DEVELOPMENT}.get(
        group, tabular_data.SUITE
    )
    seeds, epsilons = ([0], [1.0]) if args.quick else (list(range(tabular.SEEDS)), list(tabular.EPSILONS))
    full = not args.quick and not args.datasets and not args.methods and args.peers
    name = f"tabular_{group}"
    path = pathlib.Path(args.out or (harness.RESULTS if full else harness.RESULTS / "scratch")) / f"{name}.jsonl"
    log(f"{name}: {', '.join(names)}; seeds {_seeds(seeds)}, epsilons {' '.join(f'{e:g}' for e in epsilons)}, "
        f"delta {harness.DELTA:g}{'' if full else ' (PARTIAL RUN, not the recorded protocol)'}")  # fmt: skip
    log(f"versions: {versions()}")
    log(f"records: {path}\n")
    start = time.perf_counter()
    records = tabular.run(
        names, seeds, epsilons, harness.RecordFile(path), peers=args.peers, log=log, methods=args.methods
    )
    log(f"\nwall time {(time.perf_counter() - start) / 60:.1f} minutes; records: {path}")
    for method, label in ((tabular.PRIVATE_CLASSIFIER, "PrivateClassifier"), (tabular.BOOSTING, "NoisyBoosting")):
        rows = tabular.summary(records, method=method)
        if rows:
            log(tabular.format_summary(rows, label))
    if full:
        output = FIGURE.parent / f"{name}.png"
        figure.draw_records(output, [path])
        log(f"figure: {output}")
    return records


def main(argv=None):
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "list":
        for name, experiment in EXPERIMENTS.items():
            quick = " ".join(f"{e:g}" for e in experiment.quick_epsilons)
            quick = f"--quick: {experiment.quick_seeds} seed, epsilons {quick}"
            print(f"{name:18s} {experiment.summary}\n{'':18s} {experiment.seeds} seeds, epsilons "
                  f"{' '.join(f'{e:g}' for e in experiment.epsilons)}; {quick}")  # fmt: skip
    elif args.command == "table":
        records = harness.read_records(*args.records)
        differences = [exp.differences for exp in EXPERIMENTS.values() if exp.benchmark == records[0]["benchmark"]]
        print(harness.format_table(records, [pair for pairs in differences for pair in pairs]))
    elif args.command == "suite":
        run_suite(args)
    elif args.command == "figure":
        paths = figure.draw(args.output)
        print(f"wrote {args.output} from {', '.join(path.name for path in paths)}")
    else:
        experiment = EXPERIMENTS[args.experiment] if args.command == "run" else adult.HEADLINE
        _, path, full = run_experiment(experiment, args)
        if args.command == "headline" and not args.no_figure:
            output = args.figure or (FIGURE if full else path.parent / "privacy_utility.png")
            paths = figure.draw(output, replace={"adult_headline.jsonl": path})
            print(f"figure: {output} (from {', '.join(str(p) for p in paths)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
