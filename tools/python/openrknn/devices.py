"""Boards reachable over ADB: list_devices (`adb devices`), choosing the device of
init_runtime(device_id=...), and forwarding a host port to the board's rknn_server (for the
remote backend). The adb program is $OPENRKNN_ADB, else `adb` on PATH. NTB (the RK1808
compute stick's transport) is not supported: its list is empty."""

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
    listing = _run_adb(["devices"], timeout)
    serials = []
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1] == "device" and not line.startswith("List of"):
            serials.append(fields[0])
    return serials


def choose_device(device_id=None):
    """The serial to talk to: `device_id` if adb lists it, else the only device connected."""
    serials = adb_devices()
    if device_id is not None:
        if device_id not in serials:
            listed = ", ".join(serials) if serials else "none"
            raise DeviceListError(f"device_id '{device_id}' is not connected (adb lists: {listed})")
        return device_id
    if not serials:
        raise DeviceListError("no device connected (adb devices lists none)")
    if len(serials) > 1:
        raise DeviceListError(f"{len(serials)} devices connected ({', '.join(serials)}): "
                              "pass device_id")
    return serials[0]


def _run_adb(arguments, timeout):
    """Runs adb with `arguments`; its standard output, or DeviceListError with the reason."""
    adb = find_adb()
    if adb is None:
        raise DeviceListError("adb not found: install it (Debian package adb) or set OPENRKNN_ADB")
    command = [adb, *arguments]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DeviceListError(f"cannot run {' '.join(command)}: {error}") from None
    if result.returncode != 0:
        raise DeviceListError(f"{' '.join(command)} failed: "
                              f"{result.stderr.strip() or result.returncode}")
    return result.stdout


def forward_port(device_id, device_port, local_port=0, timeout=20):
    """`adb -s DEVICE forward tcp:LOCAL tcp:DEVICE_PORT`, so a client on this host reaches a
    daemon listening on the board; local_port 0 lets adb pick a free port. Returns the local
    port."""
    arguments = ["-s", device_id, "forward", f"tcp:{local_port}", f"tcp:{device_port}"]
    printed = _run_adb(arguments, timeout).strip()
    if local_port:
        return local_port
    if not printed.isdigit():
        raise DeviceListError(f"adb {' '.join(arguments)} printed {printed!r}, not a port number")
    return int(printed)


def remove_forward(device_id, local_port, timeout=20):
    """`adb -s DEVICE forward --remove tcp:LOCAL`: undoes forward_port. Returns why it failed,
    or None: callers are cleaning up and can only report it."""
    try:
        _run_adb(["-s", device_id, "forward", "--remove", f"tcp:{local_port}"], timeout)
    except DeviceListError as error:
        return str(error)
    return None
