"""IDX files (the MNIST format): a reader, MNIST / Fashion-MNIST loaders, a checked download."""

import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

import numpy as np

#: IDX type codes (third byte of the magic number) -> big-endian numpy dtypes.
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

#: The four files of an MNIST-like dataset, as published.
IDX_FILES = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}

#: Mirrors and MD5 of the published .gz files (the checksums torchvision uses).
SOURCES = {
    "mnist": {
        "url": "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "md5": {
            "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
            "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
            "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
            "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
        },
        "how_to_get": "download=True (needs network), or put the four files in the directory",
    },
    "fashion-mnist": {
        "url": "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
        "md5": {
            "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
            "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
            "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
            "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
        },
        "how_to_get": "`apt-get install dataset-fashion-mnist` (files in /usr/share/datasets/fashion-mnist), "
        "or download=True (needs network)",
    },
}

DEFAULT_DIRECTORIES = {"fashion-mnist": "/usr/share/datasets/fashion-mnist"}


def read_idx(path):
    """Read one IDX file (gzipped or not) into a numpy array.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    array : ndarray
        Of the file's dtype and shape (e.g. ``(60000, 28, 28)`` uint8).

    Raises
    ------
    ValueError
        If the file is not a well-formed IDX file.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as stream:
        raw = stream.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"{path} is not an IDX file (bad magic number {raw[:4].hex()}).")
    ndim = raw[3]
    header = 4 + 4 * ndim
    shape = tuple(int(d) for d in np.frombuffer(raw[4:header], dtype=">u4"))
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(f"{path}: header says shape {shape} ({expected} bytes), the file holds {len(raw) - header}.")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def get_data_home(data_home=None):
    """Cache directory for downloads: ``data_home``, else ``$SKPATE_DATA``, else ``~/skpate_data``."""
    home = Path(data_home or os.environ.get("SKPATE_DATA", Path.home() / "skpate_data")).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home


def _md5(path):
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url, target, md5):
    """Download ``url`` to ``target`` atomically, checking its MD5."""
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
        with urllib.request.urlopen(url, timeout=60) as response:
            shutil.copyfileobj(response, tmp)
    if _md5(tmp.name) != md5:
        os.unlink(tmp.name)
        raise OSError(f"the download of {url} does not match its published MD5 {md5}; try again later.")
    os.replace(tmp.name, target)


def load_idx_dataset(name, directory=None, *, download=False, data_home=None, url=None):
    """Load an MNIST-like dataset from its four IDX files.

    Parameters
    ----------
    name : {"mnist", "fashion-mnist"}
    directory : str or path-like, optional
        Where the files are (``.gz`` or uncompressed). Default: the Debian
        package's directory for Fashion-MNIST, else the cache directory.
    download : bool, default=False
        Download missing files into ``data_home`` (checked against the
        published MD5) instead of failing.
    data_home : str or path-like, optional
        Cache directory (see :func:`get_data_home`).
    url : str, optional
        Base URL of a mirror (default: the dataset's published one).

    Returns
    -------
    X_train : ndarray of shape (60000, 28, 28), uint8
    y_train : ndarray of shape (60000,), int64
    X_test : ndarray of shape (10000, 28, 28), uint8
    y_test : ndarray of shape (10000,), int64

    Raises
    ------
    FileNotFoundError
        Naming the missing files and how to get them.
    """
    if name not in SOURCES:
        raise ValueError(f"name must be one of {sorted(SOURCES)}, got {name!r}.")
    source = SOURCES[name]
    if directory is None:
        default = DEFAULT_DIRECTORIES.get(name)
        directory = default if default and Path(default).is_dir() and not download else get_data_home(data_home) / name
    directory = Path(directory)

    def find(filename):
        for candidate in (directory / filename, directory / filename[: -len(".gz")]):
            if candidate.is_file():
                return candidate
        return None

    missing = [f for f in IDX_FILES.values() if find(f) is None]
    if missing and download:
        directory.mkdir(parents=True, exist_ok=True)
        for filename in missing:
            _download((url or source["url"]) + filename, directory / filename, source["md5"][filename])
        missing = []
    if missing:
        raise FileNotFoundError(
            f"{name}: {', '.join(missing)} not found in {directory}. To get them: {source['how_to_get']}."
        )
    arrays = {key: read_idx(find(filename)) for key, filename in IDX_FILES.items()}
    for split in ("train", "test"):
        if arrays[f"{split}_images"].shape[0] != arrays[f"{split}_labels"].shape[0]:
            raise ValueError(f"{name}: {split} images and labels have different lengths.")
    return tuple(
        arrays[key].astype(np.int64) if key.endswith("labels") else arrays[key]
        for key in ("train_images", "train_labels", "test_images", "test_labels")
    )


def load_fashion_mnist(directory=None, **kwargs):
    """Fashion-MNIST (Xiao et al. 2017, MIT license): see :func:`load_idx_dataset`."""
    return load_idx_dataset("fashion-mnist", directory, **kwargs)


def load_mnist(directory=None, **kwargs):
    """MNIST (LeCun et al.): see :func:`load_idx_dataset`."""
    return load_idx_dataset("mnist", directory, **kwargs)
