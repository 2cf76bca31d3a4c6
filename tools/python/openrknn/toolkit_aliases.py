"""Lets unchanged toolkit scripts (`from rknn.api import RKNN`, `from rknnlite.api import
RKNNLite`) use this package: install() registers `rknn`, `rknn.api`, `rknnlite` and
`rknnlite.api` as aliases in this process only (nothing is installed under those names, so a
vendor toolkit on the same machine is untouched). `python -m openrknn.run script.py` does it
for a whole script."""

from __future__ import annotations

import sys
import types

from . import api

_ALIASES = {"rknn": ("rknn.api", "RKNN", api.RKNN),
            "rknnlite": ("rknnlite.api", "RKNNLite", api.RKNNLite)}


def install():
    """Registers the aliases; a real `rknn` / `rknnlite` already imported is left alone."""
    for package_name, (module_name, class_name, cls) in _ALIASES.items():
        if package_name in sys.modules:
            continue
        package = types.ModuleType(package_name, f"openrknn alias of the toolkit's {package_name}")
        package.__path__ = []  # a package, so `import rknn.api` works
        module = types.ModuleType(module_name, f"openrknn alias: {class_name} is "
                                               f"openrknn.api.{class_name}")
        setattr(module, class_name, cls)
        package.api = module
        sys.modules[package_name] = package
        sys.modules[module_name] = module
