"""Command line: the privacy report of a vote matrix, for teachers trained anywhere.

``python -m skpate analyze VOTES.npy --aggregator confident-gnmax --threshold 200
--sigma-threshold 150 --sigma 40 --delta 1e-5 --answered MASK.npy``
"""

import argparse
import sys

import numpy as np

from .pate import aggregators as agg
from .privacy import analyze

NOISE_OPTIONS = ["threshold", "sigma_threshold", "sigma", "scale", "constant", "confidence"]


def _parser():
    parser = argparse.ArgumentParser(prog="python -m skpate", description="skpate command line.")
    commands = parser.add_subparsers(dest="command", required=True)
    analyze_cmd = commands.add_parser(
        "analyze",
        help="privacy report of a vote matrix",
        description="Print the privacy report (data-independent, data-dependent and, for GNMax and "
        "Confident-GNMax, sanitized epsilon) of aggregating a vote matrix.",
    )
    analyze_cmd.add_argument("votes", help="a .npy file: int array (n_queries, n_classes) of teacher vote counts")
    analyze_cmd.add_argument("--aggregator", required=True, choices=sorted(agg.AGGREGATORS))
    for name in NOISE_OPTIONS:
        analyze_cmd.add_argument("--" + name.replace("_", "-"), type=float, dest=name)
    analyze_cmd.add_argument("--delta", type=float, required=True)
    analyze_cmd.add_argument("--answered", help="a .npy file: bool array (n_queries,), the queries that were answered")
    analyze_cmd.add_argument("--student-proba", help="a .npy file: (n_queries, n_classes), for interactive-gnmax")
    analyze_cmd.add_argument("--method", choices=["classic", "improved"], default="classic")
    analyze_cmd.add_argument(
        "--sanitize-order",
        type=float,
        default=None,
        help="RDP order of the sanitized release, fixed before seeing the votes; none by default",
    )
    analyze_cmd.add_argument("--seed", type=int, default=None, help="seed of the sanitized release's noise")
    return parser


def _load(path, option):
    if path is None:
        return None
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ValueError(f"{option}: no such file {path!r}.") from None
    except (ValueError, OSError) as exc:
        raise ValueError(f"{option}: {path!r} is not a .npy array file ({exc}).") from None


def _aggregator(args):
    cls = agg.AGGREGATORS[args.aggregator]
    options = list(cls._parameter_constraints)  # the parameters it takes
    flags = {name: "--" + name.replace("_", "-") for name in NOISE_OPTIONS}
    unused = [flags[name] for name in NOISE_OPTIONS if name not in options and getattr(args, name) is not None]
    if unused:
        takes = ", ".join(flags[name] for name in options) or "no options"
        raise ValueError(f"--aggregator {args.aggregator} takes {takes}; got {', '.join(unused)}.")
    # Every parameter explicit (NZC: its constant and one noise), never a silent default.
    required = ["constant"] if cls is agg.NZC else options
    missing = [flags[name] for name in required if getattr(args, name) is None]
    if missing:
        raise ValueError(f"--aggregator {args.aggregator} needs {', '.join(missing)}.")
    return cls(**{name: getattr(args, name) for name in options if getattr(args, name) is not None})


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        votes = _load(args.votes, "VOTES")
        answered = _load(args.answered, "--answered")
        proba = _load(args.student_proba, "--student-proba")
        aggregator = _aggregator(args)
        report = analyze(
            votes, aggregator, args.delta, answered=answered, student_proba=proba, method=args.method,
            sanitize_order=args.sanitize_order, random_state=args.seed,
        )  # fmt: skip
    except ValueError as exc:
        print(f"python -m skpate analyze: error: {exc}", file=sys.stderr)
        return 2
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
