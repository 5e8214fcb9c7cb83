"""IDX files written by the tests themselves: reading, loading, checked download."""

import gzip
import hashlib
import struct

import numpy as np
import pytest

from skpate.datasets import _idx, load_idx_dataset, read_idx


def write_idx(path, array, type_code=0x08, compress=True):
    header = bytes([0, 0, type_code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    data = header + array.astype(np.dtype(_idx._IDX_DTYPES[type_code])).tobytes()
    with (gzip.open if compress else open)(path, "wb") as file:
        file.write(data)
    return path


def write_dataset(directory, n_train=12, n_test=5, compress=True):
    rng = np.random.default_rng(0)
    arrays = {
        "train_images": rng.integers(0, 256, (n_train, 28, 28)),
        "train_labels": rng.integers(0, 10, n_train),
        "test_images": rng.integers(0, 256, (n_test, 28, 28)),
        "test_labels": rng.integers(0, 10, n_test),
    }
    for key, filename in _idx.IDX_FILES.items():
        name = filename if compress else filename[:-3]
        write_idx(directory / name, arrays[key], compress=compress)
    return arrays


@pytest.mark.parametrize("type_code", [0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E])
def test_read_idx_all_types(tmp_path, type_code):
    array = np.arange(-12, 12).reshape(2, 3, 4) if type_code != 0x08 else np.arange(24).reshape(2, 3, 4)
    path = write_idx(tmp_path / "a.idx.gz", array, type_code)
    out = read_idx(path)
    assert out.shape == (2, 3, 4) and out.dtype.byteorder in "=|"
    np.testing.assert_array_equal(out, array)


def test_read_idx_rejects_bad_files(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04rest")
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(tmp_path / "bad")
    path = write_idx(tmp_path / "short.gz", np.zeros((3, 2)))
    with gzip.open(path) as file:
        raw = file.read()[:-1]
    with gzip.open(path, "wb") as file:
        file.write(raw)
    with pytest.raises(ValueError, match="header says"):
        read_idx(path)


@pytest.mark.parametrize("compress", [True, False])
def test_load_from_directory(tmp_path, compress):
    arrays = write_dataset(tmp_path, compress=compress)
    X_train, y_train, X_test, y_test = load_idx_dataset("mnist", tmp_path)
    np.testing.assert_array_equal(X_train, arrays["train_images"])
    np.testing.assert_array_equal(y_test, arrays["test_labels"])
    assert X_train.dtype == np.uint8 and y_train.dtype == np.int64 and X_test.shape == (5, 28, 28)


def test_missing_files_error_names_them_and_the_fix(tmp_path):
    write_dataset(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte.gz.*apt-get install dataset-fashion-mnist"):
        load_idx_dataset("fashion-mnist", tmp_path)


def test_download_checks_md5_and_caches(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    arrays = write_dataset(mirror)
    md5 = {f: hashlib.md5((mirror / f).read_bytes()).hexdigest() for f in _idx.IDX_FILES.values()}
    monkeypatch.setitem(_idx.SOURCES["mnist"], "md5", md5)
    cache = tmp_path / "cache"
    X_train, *_ = load_idx_dataset("mnist", download=True, data_home=cache, url=mirror.as_uri() + "/")
    np.testing.assert_array_equal(X_train, arrays["train_images"])
    assert sorted(p.name for p in (cache / "mnist").iterdir()) == sorted(_idx.IDX_FILES.values())
    # Cached: a second load needs no mirror.
    load_idx_dataset("mnist", data_home=cache, url="file:///nonexistent/")
    # A corrupted download is refused and not left in the cache.
    monkeypatch.setitem(_idx.SOURCES["mnist"], "md5", {f: "0" * 32 for f in md5})
    with pytest.raises(OSError, match="MD5"):
        load_idx_dataset("mnist", download=True, data_home=tmp_path / "other", url=mirror.as_uri() + "/")
    assert not any((tmp_path / "other" / "mnist").iterdir())


def test_unknown_name():
    with pytest.raises(ValueError, match="name"):
        load_idx_dataset("cifar")
