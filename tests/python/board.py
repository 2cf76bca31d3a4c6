"""A 'board' for the remote-path tests: this build's rknn_server started on a free loopback port,
and a fake `adb` that lists one device, answers `forward` with that port and records every
call (so a test sees the forward set up and removed).

The daemon is $OPENRKNN_SERVER (the ctest passes the build's), else the newest build*/ of the
checkout; without either the tests that need it are skipped.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
SERIAL = "515e9b401c060c0b"


def server_binary():
    explicit = os.environ.get("OPENRKNN_SERVER")
    if explicit:
        if not Path(explicit).is_file():
            pytest.fail(f"$OPENRKNN_SERVER is '{explicit}', which is not a file (build the "
                        "rknn_server target)")
        return explicit
    built = [p for p in CHECKOUT.glob("build*/rknn_server/rknn_server") if p.is_file()]
    if not built:
        pytest.skip("rknn_server is not built and $OPENRKNN_SERVER is not set")
    return str(max(built, key=lambda p: p.stat().st_mtime))


class Daemon:
    """rknn_server on 127.0.0.1:<free port>, stopped with SIGTERM (as a board's init would)."""

    def __init__(self, directory: Path, arguments=()):
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.log_path = directory / "rknn_server.log"
        port_file = directory / "port"
        # An empty system root unless the test gives one: eval_perf(fix_freq=True) must never
        # pin this machine's CPU governors.
        empty_root = directory / "empty-root"
        empty_root.mkdir(exist_ok=True)
        command = [server_binary(), "--listen", "127.0.0.1:0", "--port_file", str(port_file),
                   "--sysfs_root", str(empty_root), *arguments]
        setpriv = shutil.which("setpriv")
        if setpriv:  # the daemon must not outlive a test runner that is killed
            command = [setpriv, "--pdeathsig", "KILL", "--", *command]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        give_up = time.monotonic() + 30
        while not port_file.is_file():
            if self.process.poll() is not None or time.monotonic() > give_up:
                self.stop()
                pytest.fail(f"rknn_server did not start: {self.log()}")
            time.sleep(0.02)
        self.port = int(port_file.read_text())

    def log(self):
        return self.log_path.read_text(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


class FakeAdb:
    """An `adb` on PATH for one test: `devices` lists SERIAL, `forward tcp:0 ...` prints
    `port`, `forward --remove` succeeds; `calls()` are the argument lines, in order."""

    def __init__(self, directory: Path, monkeypatch, port):
        directory.mkdir(parents=True, exist_ok=True)
        self.log_path = directory / "adb-calls.txt"
        script = directory / "adb"
        script.write_text(
            "#!/bin/sh\n"
            f'echo "$*" >> "{self.log_path}"\n'
            'case "$*" in\n'
            f"  devices) printf 'List of devices attached\\n{SERIAL}\\tdevice\\n' ;;\n"
            '  *"forward --remove"*) ;;\n'
            f"  *forward*) echo {port} ;;\n"
            '  *) echo "fake adb: unexpected arguments: $*" >&2; exit 1 ;;\n'
            "esac\n")
        script.chmod(0o755)
        monkeypatch.delenv("OPENRKNN_ADB", raising=False)
        monkeypatch.delenv("OPENRKNN_SERVER_ADDRESS", raising=False)
        monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")

    def calls(self):
        return self.log_path.read_text().splitlines() if self.log_path.is_file() else []


def unused_port():
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
