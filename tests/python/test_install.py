"""`pip install ./tools/python` gives a working package (built offline here: a copy of the
source, no build isolation, installed into a scratch directory)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "tools" / "python"


def test_pip_install_and_import(tmp_path, native_paths):
    pytest.importorskip("setuptools")
    pytest.importorskip("wheel")  # bdist_wheel for setuptools < 70.1
    source = tmp_path / "source"
    shutil.copytree(SOURCE, source, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                                  "__pycache__"))
    target = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--no-index", "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    installed = sorted(p.name for p in (target / "openrknn").iterdir())
    assert {"api", "runtime", "native.py", "locate.py"} <= set(installed)
    # The rknn_server protocol travels with the package (the remote client generates from it).
    proto = target / "openrknn" / "proto" / "rknn_server.proto"
    assert "package openrknn.server.v1;" in proto.read_text()
    # The installed copy, outside the checkout, finds the tools through the environment.
    environment = dict(os.environ, PYTHONPATH=str(target), OPENRKNN_CONVERT=native_paths[0],
                       OPENRKNN_LIBRKNNRT=native_paths[1])
    script = ("import openrknn.api as api, openrknn.locate as locate; "
              "assert api.__file__.startswith(%r); r = api.RKNN(); "
              "print(locate.find_converter(), r.load_rknn('missing.rknn'))" % str(target))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, env=environment, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [native_paths[0], "-1"]
