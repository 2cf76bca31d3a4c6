#!/usr/bin/env python3
"""The converter tests' name for the project's one ctypes binding of librknnrt, which lives in
the host package: tools/python/openrknn/native.py. Everything is re-exported from there.

    python tests/tools/orknn_runtime.py MODEL.rknn [input.npy ...]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "python"))

from openrknn.native import *  # noqa: E402,F401,F403
from openrknn.native import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
