"""skpate's benchmarks: one harness, one record schema, one command line (``python -m benchmarks``).

Modules: :mod:`benchmarks.harness` (data, the seed x epsilon loop, records,
tables), :mod:`benchmarks.peers` (DP-SGD and diffprivlib peers, imported
lazily), :mod:`benchmarks.adult` and :mod:`benchmarks.fashion` (the
experiments), :mod:`benchmarks.figure` (the privacy-utility figure). One-off
sweeps of earlier work are kept, not run, in ``benchmarks/archive/``.
"""
