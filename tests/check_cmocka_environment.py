#!/usr/bin/env python3
"""Checks that every CTest run of a cmocka program aborts on a failed check.

    check_cmocka_environment.py CTEST BUILD_DIR

A run whose ENVIRONMENT lacks CMOCKA_TEST_ABORT=1 jumps out of a failed test past C++
destructors, and the program then hangs until CTest's timeout instead of failing
(cmake/OrknnCmockaEnvironment.cmake). Such a run is easy to add by setting its ENVIRONMENT
property directly, so this lists the build's tests (ctest --show-only=json-v1) and reads the
dynamic section of every ELF file a test's command names (under qemu-user, the program is an
argument of the emulator): those linked with libcmocka must have the variable. Exits 1 with
the offending tests' names, or 0.
"""

import json
import subprocess
import sys
from pathlib import Path


def links_cmocka(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            if file.read(4) != b"\x7fELF":
                return False
    except OSError:
        return False
    dynamic = subprocess.run(["readelf", "--dynamic", str(path)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, check=False).stdout
    return any("NEEDED" in line and "libcmocka" in line for line in dynamic.splitlines())


def main() -> int:
    ctest, build_dir = sys.argv[1], sys.argv[2]
    listing = subprocess.run([ctest, "--show-only=json-v1"], cwd=build_dir,
                             stdout=subprocess.PIPE, text=True, check=True).stdout
    cmocka_runs = 0
    offenders = []
    for test in json.loads(listing)["tests"]:
        programs = [Path(word) for word in test.get("command", []) if Path(word).is_file()]
        if not any(links_cmocka(program) for program in programs):
            continue
        cmocka_runs += 1
        environment = next((p["value"] for p in test.get("properties", [])
                            if p["name"] == "ENVIRONMENT"), [])
        if "CMOCKA_TEST_ABORT=1" not in environment:
            offenders.append(test["name"])
    if cmocka_runs == 0:
        print("no cmocka programs found among the tests: is the build complete?")
        return 1
    if offenders:
        print("cmocka runs without CMOCKA_TEST_ABORT=1 (set their environment with "
              "orknn_cmocka_environment):")
        for name in offenders:
            print("  " + name)
        return 1
    print(f"{cmocka_runs} cmocka runs, each with CMOCKA_TEST_ABORT=1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
