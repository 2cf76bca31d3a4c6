"""The two numbers the converter comparisons are judged by."""

from __future__ import annotations

import numpy as np


def relative_max_error(actual, reference):
    """max |actual - reference| / max |reference| (the absolute error when the reference is all
    zeros). Shapes must match."""
    actual = np.asarray(actual, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if actual.shape != reference.shape:
        raise ValueError(f"shape {list(actual.shape)} != reference {list(reference.shape)}")
    if actual.size == 0:
        return 0.0
    error = float(np.max(np.abs(actual - reference)))
    scale = float(np.max(np.abs(reference)))
    return error / scale if scale > 0 else error


def cosine(actual, reference):
    """Cosine similarity of the flattened arrays; 1.0 when both are all zeros."""
    a = np.asarray(actual, dtype=np.float64).ravel()
    r = np.asarray(reference, dtype=np.float64).ravel()
    if a.shape != r.shape:
        raise ValueError(f"{a.size} values != reference {r.size}")
    norms = float(np.linalg.norm(a) * np.linalg.norm(r))
    if norms == 0.0:
        return 1.0 if not a.any() and not r.any() else 0.0
    return float(np.dot(a, r) / norms)
