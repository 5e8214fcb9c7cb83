"""The Sphinx site (API reference, user guide, examples gallery) builds without a single warning."""

import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")
pytest.importorskip("sphinx_gallery")
pytest.importorskip("myst_parser")
pytest.importorskip("matplotlib")

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"

# Slow (a full Sphinx build): off the unit tests' path with -m "not docs"; a plain run still builds the docs.
pytestmark = pytest.mark.docs


def test_docs_build_without_warnings(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(tmp_path)],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-5000:]
    assert (tmp_path / "api.html").exists() and (tmp_path / "auto_examples" / "index.html").exists()
    # The fast example was executed: its four figures are in the gallery.
    assert len(list((tmp_path / "_images").glob("sphx_glr_plots_*.png"))) >= 4
