"""Finds the two native pieces the package drives: the `rknn-convert` tool (conversion) and
`librknnrt.so` (the local runtime, our simulator).

Search order, first hit wins:
  1. an explicit path given by the caller;
  2. $OPENRKNN_CONVERT / $OPENRKNN_LIBRKNNRT ($ORKNN_LIBRKNNRT is also read, the tests' older name);
  3. next to the package: openrknn/bin/rknn-convert and openrknn/lib/librknnrt.so (where a wheel
     that bundles them puts them);
  4. in a source checkout (the package imported from tools/python/), the newest build*/ tree;
  5. PATH for the tool; the dynamic loader's path (ldconfig, LD_LIBRARY_PATH) for the library.
"""

from __future__ import annotations

import ctypes.util
import os
import shutil
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent

CONVERT_VARIABLES = ("OPENRKNN_CONVERT",)
LIBRARY_VARIABLES = ("OPENRKNN_LIBRKNNRT", "ORKNN_LIBRKNNRT")


class NotFound(FileNotFoundError):
    """A native piece is missing; the message says how to provide it."""


def _checkout_root():
    # tools/python/openrknn -> the checkout, when the package is used from the source tree.
    root = _PACKAGE_DIR.parents[2]
    return root if (root / "include" / "rknn_api.h").is_file() else None


def _newest(paths):
    existing = [p for p in paths if p.is_file()]
    return str(max(existing, key=lambda p: p.stat().st_mtime)) if existing else None


def _from_environment(variables, what):
    for variable in variables:
        value = os.environ.get(variable)
        if value:
            if not Path(value).is_file():
                raise NotFound(f"{what}: ${variable} is '{value}', which is not a file")
            return value
    return None


def _find(explicit, variables, what, bundled, checkout_pattern, system_lookup, missing):
    if explicit:
        # A bare name ("librknnrt.so.2") is left to the dynamic loader or PATH.
        if os.sep in str(explicit) and not Path(explicit).is_file():
            raise NotFound(f"{what}: '{explicit}' is not a file")
        return str(explicit)
    found = _from_environment(variables, what)
    if found:
        return found
    if bundled.is_file():
        return str(bundled)
    root = _checkout_root()
    found = _newest(root.glob(checkout_pattern)) if root is not None else None
    found = found or system_lookup()
    if found:
        return found
    raise NotFound(missing)


def find_converter(explicit=None) -> str:
    return _find(explicit, CONVERT_VARIABLES, "rknn-convert", _PACKAGE_DIR / "bin" / "rknn-convert",
                 "build*/tools/rknn-convert/rknn-convert", lambda: shutil.which("rknn-convert"),
                 "rknn-convert not found: build it (cmake --build build --target rknn-convert), "
                 "install it on PATH, or set OPENRKNN_CONVERT to its path")


def find_library(explicit=None) -> str:
    return _find(explicit, LIBRARY_VARIABLES, "librknnrt.so", _PACKAGE_DIR / "lib" / "librknnrt.so",
                 "build*/librknnrt/api/librknnrt.so",
                 lambda: ctypes.util.find_library("rknnrt"),
                 "librknnrt.so not found: build the runtime (cmake --build build --target "
                 "rknnrt), install it where the loader finds it, or set OPENRKNN_LIBRKNNRT to "
                 "its path")
