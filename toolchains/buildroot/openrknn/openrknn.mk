################################################################################
#
# openrknn: built from this checkout (a BR2_EXTERNAL tree or package/ may link
# this directory); the runtime, headers, CMake package and librknnrt.pc.
#
################################################################################

OPENRKNN_VERSION = 0.1.0
OPENRKNN_SITE = $(OPENRKNN_PKGDIR)/../../..
OPENRKNN_SITE_METHOD = local
OPENRKNN_LICENSE = PROPRIETARY
OPENRKNN_INSTALL_STAGING = YES
OPENRKNN_DEPENDENCIES = protobuf host-protobuf
OPENRKNN_CONF_OPTS = \
	-DORKNN_BUILD_TESTS=OFF \
	-DORKNN_BUILD_TOOLS=OFF \
	-DORKNN_BUILD_SAMPLES=OFF

$(eval $(cmake-package))
