"""How every public method fails: the toolkit returns -1 (or None where it returns data) and logs
one `E <method>: <reason>` line; it never lets a Python traceback reach the script.

`@api_method(failure=-1)` gives a method that behaviour: wrong or unknown keyword arguments,
an ApiError raised inside (the reason), and any unexpected exception (reported as an internal
error; the traceback only with verbose=True) all become a logged line and the failure value.
"""

from __future__ import annotations

import functools
import inspect
import traceback

import numpy as np


class ApiError(Exception):
    """A call cannot be done; the message says why, naming the value and the rule it broke."""


def api_method(failure=-1):
    def decorate(function):
        signature = inspect.signature(function)
        name = function.__name__

        @functools.wraps(function)
        def wrapper(self, *args, **kwargs):
            log = self._log
            try:
                signature.bind(self, *args, **kwargs)
            except TypeError as error:
                valid = ", ".join(p for p in list(signature.parameters)[1:])
                log.error(name, f"{error} (parameters: {valid})")
                return failure
            try:
                return function(self, *args, **kwargs)
            except ApiError as error:
                log.error(name, str(error))
            except KeyboardInterrupt:
                raise
            except Exception as error:  # noqa: BLE001 - the toolkit contract: log and return
                log.error(name, f"internal error: {type(error).__name__}: {error}")
                if log.verbose:
                    log.debug(name, traceback.format_exc())
            return failure

        return wrapper

    return decorate


def describe(value, limit=60):
    """A value for an error message: one line, short (arrays by shape and type)."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {list(value.shape)} {value.dtype}"
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def require(condition, message):
    if not condition:
        raise ApiError(message)


def require_bool(value, name):
    require(isinstance(value, (bool, int)) and value in (0, 1, True, False),
            f"{name} must be True or False, got {describe(value)}")
    return bool(value)


def require_choice(value, name, choices, allow_none=False, ignore_case=True):
    if value is None and allow_none:
        return None
    if isinstance(value, str):
        key = value.lower() if ignore_case else value
        for choice in choices:
            if key == (choice.lower() if ignore_case else choice):
                return choice
    raise ApiError(f"{name} {describe(value)} is not supported (valid: {', '.join(choices)})")
