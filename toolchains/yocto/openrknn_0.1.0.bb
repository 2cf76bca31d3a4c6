# Yocto/OpenEmbedded recipe for OpenRKNN built from this checkout (externalsrc): the runtime
# librknnrt.so, its headers, the CMake package and librknnrt.pc. Copy or link this file into a
# layer (e.g. meta-openrknn/recipes-ai/openrknn/) and set EXTERNALSRC to the checkout when the
# layer does not sit inside it. Host tools (rknn-convert) and tests are not built for the target.
SUMMARY = "OpenRKNN runtime: open drop-in replacement for Rockchip librknnrt.so (RKNN SDK 2.3.2 ABI)"
HOMEPAGE = "https://github.com/openrknn/openrknn"
SECTION = "libs"
# The project has not chosen its license file yet; replace with it and LIC_FILES_CHKSUM.
LICENSE = "CLOSED"

inherit cmake pkgconfig externalsrc

EXTERNALSRC = "${THISDIR}/../.."
EXTERNALSRC_BUILD = "${WORKDIR}/build"

DEPENDS = "protobuf protobuf-native"
DEPENDS:append:x86-64 = " cpu-features"

EXTRA_OECMAKE = "-DORKNN_BUILD_TESTS=OFF -DORKNN_BUILD_TOOLS=OFF -DORKNN_BUILD_SAMPLES=OFF"

# RK3588 (Cortex-A76 + A55) and RK3576 (Cortex-A72 + A53) machines get the tuned flags the
# toolchain files use; the runtime still picks its kernels from the CPU at run time.
TUNE_CCARGS:append:rk3588 = " -mcpu=cortex-a76.cortex-a55"
TUNE_CCARGS:append:rk3576 = " -mcpu=cortex-a72.cortex-a53"

# librknnrt.so is the SONAME (as the vendor's): the library itself goes in the main package,
# not in -dev as an unversioned .so normally would.
FILES_SOLIBSDEV = ""
FILES:${PN} += "${libdir}/librknnrt.so"
INSANE_SKIP:${PN} += "dev-so"
