"""Runs the C++ converter, `rknn-convert` (docs/rknn-convert.md), for build, hybrid
quantization and accuracy analysis.

The options gathered by config / load_onnx / build go into a JSON config file with the toolkit's
key names (which are the converter's), so what the converter checks and reports names the
same keys the script used.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from . import locate
from .api.calls import ApiError


def _command_failure(result):
    lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("E ")]
    shown = errors or lines[-5:] or [f"exit status {result.returncode}"]
    # "E rknn-convert: message" -> "rknn-convert: message"
    return "\n".join(line[2:] if line.startswith("E ") else line for line in shown)


def run(subcommand, options: dict, log, where, converter=None, timeout=None):
    """Runs `rknn-convert [subcommand] --config FILE` with `options` (None values left out).
    Returns the tool's standard output; raises ApiError with the tool's error lines."""
    try:
        tool = locate.find_converter(converter)
    except locate.NotFound as error:
        raise ApiError(str(error)) from None
    config = {key: value for key, value in options.items() if value is not None}
    with tempfile.TemporaryDirectory(prefix="openrknn-") as directory:
        config_path = Path(directory) / "config.json"
        config_path.write_text(json.dumps(config, indent=1))
        command = [tool] + ([subcommand] if subcommand else []) + ["--config", str(config_path)]
        if not log.verbose:
            command.append("--quiet")
        log.debug(where, "running " + " ".join(command) + "\n" + json.dumps(config))
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except OSError as error:
            raise ApiError(f"cannot run {tool}: {error}") from None
        except subprocess.TimeoutExpired:
            raise ApiError(f"{tool} did not finish within {timeout} s") from None
    if result.returncode != 0:
        raise ApiError(_command_failure(result))
    for line in result.stdout.splitlines():
        log.info(where, line)
    return result.stdout


def absolute(path):
    """Paths go to the converter absolute: its config file lives in a temporary directory."""
    return None if path is None else str(Path(os.fspath(path)).resolve())
