#!/usr/bin/env python3
"""Checks the packaging of OpenRKNN (run by ctest as test_packaging).

1. The Yocto recipe (toolchains/yocto/openrknn_<version>.bb) and the Buildroot package
   (toolchains/buildroot/openrknn/) are parsed: they must build this checkout, carry the
   project's version, depend on protobuf and pass only -D options CMakeLists.txt declares.
   No Yocto or Buildroot build runs here.
2. A staged install (cmake --install BUILD with DESTDIR, prefix /usr) must hold the headers,
   librknnrt.so with SONAME librknnrt.so, the CMake package and a librknnrt.pc that points
   into the staged tree (it is relocatable).

Usage: check_packaging.py --source DIR --build DIR
Every failure is printed with what was expected; the exit status is the number of failures.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}")


def project_version(source):
    text = open(os.path.join(source, "CMakeLists.txt")).read()
    match = re.search(r"project\(\s*OpenRKNN\s+VERSION\s+([0-9.]+)", text)
    return match.group(1) if match else None


def declared_options(source):
    text = open(os.path.join(source, "CMakeLists.txt")).read()
    return set(re.findall(r"option\(\s*(ORKNN_\w+)", text))


def bitbake_variables(path):
    """VAR = "value" / VAR += / VAR:append... lines of a .bb file (no line continuations)."""
    variables = {}
    inherits = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("inherit "):
            inherits += line.split()[1:]
            continue
        match = re.match(r'^([A-Za-z0-9_:${}\-]+)\s*(=|\+=|\?=|:=)\s*"(.*)"$', line)
        check(match is not None, f"{path}: cannot parse line: {line}")
        if match:
            name, operator, value = match.groups()
            variables[name] = (variables.get(name, "") + " " + value) if operator == "+=" else value
    return variables, inherits


def make_variables(path):
    """VAR = value lines of a Buildroot .mk file, with backslash continuations joined."""
    text = open(path).read().replace("\\\n", " ")
    variables = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Z0-9_]+)\s*=\s*(.*)$", line.strip())
        if match:
            variables[match.group(1)] = " ".join(match.group(2).split())
    return variables, text


def check_cmake_options(where, text, options):
    for option in re.findall(r"-D(\w+)=", text):
        check(option in options, f"{where}: -D{option} is not an option() of CMakeLists.txt")


def check_yocto(source, version, options):
    directory = os.path.join(source, "toolchains", "yocto")
    recipe = os.path.join(directory, f"openrknn_{version}.bb")
    check(os.path.isfile(recipe), f"Yocto recipe {recipe} missing (its name carries the version)")
    if not os.path.isfile(recipe):
        return
    variables, inherits = bitbake_variables(recipe)
    for name in ("SUMMARY", "LICENSE", "DEPENDS", "EXTRA_OECMAKE", "EXTERNALSRC"):
        check(name in variables, f"{recipe}: {name} is not set")
    for cls in ("cmake", "externalsrc"):
        check(cls in inherits, f"{recipe}: does not inherit {cls}")
    external = variables.get("EXTERNALSRC", "").replace("${THISDIR}", directory)
    check(os.path.isfile(os.path.join(external, "CMakeLists.txt")) and
          os.path.samefile(external, source),
          f"{recipe}: EXTERNALSRC {variables.get('EXTERNALSRC')} is not this checkout")
    check("protobuf" in variables.get("DEPENDS", "").split(), f"{recipe}: DEPENDS lacks protobuf")
    check("protobuf-native" in variables.get("DEPENDS", "").split(),
          f"{recipe}: DEPENDS lacks protobuf-native (protoc at build time)")
    check_cmake_options(recipe, variables.get("EXTRA_OECMAKE", ""), options)


def check_buildroot(source, version, options):
    directory = os.path.join(source, "toolchains", "buildroot", "openrknn")
    makefile = os.path.join(directory, "openrknn.mk")
    config = os.path.join(directory, "Config.in")
    for path in (makefile, config):
        check(os.path.isfile(path), f"Buildroot file {path} missing")
    if not (os.path.isfile(makefile) and os.path.isfile(config)):
        return
    variables, text = make_variables(makefile)
    check(variables.get("OPENRKNN_VERSION") == version,
          f"{makefile}: OPENRKNN_VERSION {variables.get('OPENRKNN_VERSION')} != project {version}")
    check(variables.get("OPENRKNN_SITE_METHOD") == "local", f"{makefile}: SITE_METHOD not local")
    site = variables.get("OPENRKNN_SITE", "").replace("$(OPENRKNN_PKGDIR)", directory)
    check(os.path.isdir(site) and os.path.samefile(site, source),
          f"{makefile}: OPENRKNN_SITE {variables.get('OPENRKNN_SITE')} is not this checkout")
    dependencies = variables.get("OPENRKNN_DEPENDENCIES", "").split()
    for dependency in ("protobuf", "host-protobuf"):
        check(dependency in dependencies, f"{makefile}: DEPENDENCIES lacks {dependency}")
    check("$(eval $(cmake-package))" in text, f"{makefile}: not a cmake-package")
    check_cmake_options(makefile, variables.get("OPENRKNN_CONF_OPTS", ""), options)
    config_text = open(config).read()
    check(re.search(r"^config BR2_PACKAGE_OPENRKNN$", config_text, re.M) is not None,
          f"{config}: no 'config BR2_PACKAGE_OPENRKNN'")
    check("select BR2_PACKAGE_PROTOBUF" in config_text, f"{config}: does not select protobuf")


def soname(path):
    output = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    match = re.search(r"\(SONAME\)\s+Library soname: \[(.*)\]", output)
    return match.group(1) if match else None


def check_staged_install(build, version):
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    libdir_match = re.search(r"^CMAKE_INSTALL_LIBDIR:PATH=(.*)$", cache, re.M)
    libdir = libdir_match.group(1) if libdir_match else "lib"
    with tempfile.TemporaryDirectory() as stage:
        environment = dict(os.environ, DESTDIR=stage)
        result = subprocess.run(["cmake", "--install", build, "--prefix", "/usr"],
                                env=environment, capture_output=True, text=True)
        check(result.returncode == 0, f"cmake --install failed: {result.stderr.strip()}")
        root = os.path.join(stage, "usr")
        for header in ("rknn_api.h", "rknn_matmul_api.h", "rknn_custom_op.h"):
            check(os.path.isfile(os.path.join(root, "include", header)),
                  f"staged install lacks include/{header}")
        library = os.path.join(root, libdir, "librknnrt.so")
        check(os.path.isfile(library) and not os.path.islink(library),
              f"staged install lacks {libdir}/librknnrt.so as a file")
        if os.path.isfile(library):
            # The vendor library's SONAME has no version suffix and apps record exactly that;
            # so there are no librknnrt.so.N symlinks to make.
            check(soname(library) == "librknnrt.so",
                  f"SONAME of librknnrt.so is {soname(library)}, expected librknnrt.so")
        package = os.path.join(root, libdir, "cmake", "OpenRKNN")
        for name in ("OpenRKNNConfig.cmake", "OpenRKNNConfigVersion.cmake",
                     "OpenRKNNTargets.cmake"):
            check(os.path.isfile(os.path.join(package, name)),
                  f"staged install lacks {libdir}/cmake/OpenRKNN/{name}")
        pc = os.path.join(root, libdir, "pkgconfig", "librknnrt.pc")
        check(os.path.isfile(pc), f"staged install lacks {libdir}/pkgconfig/librknnrt.pc")
        if os.path.isfile(pc):
            text = open(pc).read()
            check(re.search(rf"^Version: {re.escape(version)}$", text, re.M) is not None,
                  f"librknnrt.pc does not say Version: {version}")
            query = subprocess.run(
                ["pkg-config", "--define-prefix", "--cflags", "--libs", pc],
                capture_output=True, text=True)
            if query.returncode == 0:
                # Relocatable: resolved against where the .pc file is, i.e. inside the stage.
                check(f"-I{root}/include" in query.stdout,
                      f"librknnrt.pc cflags '{query.stdout.strip()}' do not point at the staged "
                      f"{root}/include")
                check(f"-L{root}/{libdir}" in query.stdout,
                      f"librknnrt.pc libs '{query.stdout.strip()}' do not point at the staged "
                      f"{root}/{libdir}")
        tools = re.search(r"^ORKNN_BUILD_TOOLS:BOOL=(ON|TRUE|1)$", cache, re.M) is not None
        if tools:
            check(os.path.isfile(os.path.join(root, "bin", "rknn-convert")),
                  "staged install lacks bin/rknn-convert")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True)
    parser.add_argument("--build", required=True)
    arguments = parser.parse_args()
    version = project_version(arguments.source)
    check(version is not None, "CMakeLists.txt: no project(OpenRKNN VERSION x.y.z)")
    options = declared_options(arguments.source)
    check_yocto(arguments.source, version, options)
    check_buildroot(arguments.source, version, options)
    check_staged_install(arguments.build, version)
    print(f"packaging: {len(failures)} failure(s)")
    return min(len(failures), 100)


if __name__ == "__main__":
    sys.exit(main())
