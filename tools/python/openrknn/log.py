"""Log lines in the toolkit's shape, `E build: message`: a level letter, the API call, the text.

Errors and warnings are always written (stderr); information and debug lines only with
verbose=True. With verbose_file set (and verbose), every line is also appended to that file,
as the toolkit's RKNN(verbose=True, verbose_file=...) does.
"""

from __future__ import annotations

import sys

_LEVELS = {"E": 0, "W": 1, "I": 2, "D": 3}


class Logger:
    def __init__(self, verbose=False, verbose_file=None, stream=None):
        self.verbose = bool(verbose)
        self.verbose_file = verbose_file if self.verbose else None
        self._stream = stream

    def _write(self, level, where, message):
        if _LEVELS[level] > _LEVELS["W"] and not self.verbose:
            return
        prefix = f"{level} {where}: " if where else f"{level} "
        text = "\n".join(prefix + line for line in str(message).splitlines() or [""])
        stream = self._stream or sys.stderr
        print(text, file=stream, flush=True)
        if self.verbose_file:
            try:
                with open(self.verbose_file, "a", encoding="utf-8") as log_file:
                    log_file.write(text + "\n")
            except OSError as error:
                self.verbose_file = None
                print(f"W log: cannot write verbose_file: {error}; file logging stopped",
                      file=stream, flush=True)

    def error(self, where, message):
        self._write("E", where, message)

    def warning(self, where, message):
        self._write("W", where, message)

    def info(self, where, message):
        self._write("I", where, message)

    def debug(self, where, message):
        self._write("D", where, message)
