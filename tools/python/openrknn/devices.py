"""list_devices: boards reachable over ADB (`adb devices`). The adb program is $OPENRKNN_ADB, else
`adb` on PATH. NTB (the RK1808 compute stick's transport) is not supported: its list is empty."""

from __future__ import annotations

import os
import shutil
import subprocess


class DeviceListError(RuntimeError):
    pass


def find_adb():
    explicit = os.environ.get("OPENRKNN_ADB")
    if explicit:
        return explicit
    return shutil.which("adb")


def adb_devices(timeout=20):
    """Serial numbers of the devices `adb devices` lists as ready ("device" state)."""
    adb = find_adb()
    if adb is None:
        raise DeviceListError("adb not found: install it (Debian package adb) or set OPENRKNN_ADB")
    try:
        result = subprocess.run([adb, "devices"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DeviceListError(f"cannot run {adb} devices: {error}") from None
    if result.returncode != 0:
        raise DeviceListError(f"{adb} devices failed: {result.stderr.strip() or result.returncode}")
    serials = []
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1] == "device" and not line.startswith("List of"):
            serials.append(fields[0])
    return serials
