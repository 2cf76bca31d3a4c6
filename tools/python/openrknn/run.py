"""`python -m openrknn.run SCRIPT.py [ARGS...]`: runs a script written for RKNN-Toolkit2 (or
toolkit-lite) unchanged on this package (see toolkit_aliases.py)."""

from __future__ import annotations

import runpy
import sys

from . import toolkit_aliases


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    toolkit_aliases.install()
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
