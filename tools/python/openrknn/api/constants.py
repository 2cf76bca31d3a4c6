"""Names and values the toolkit's API uses."""

# rknn_core_mask values (include/rknn_api.h), exposed as RKNN.NPU_CORE_*.
NPU_CORE_AUTO = 0
NPU_CORE_0 = 1
NPU_CORE_1 = 2
NPU_CORE_2 = 4
NPU_CORE_0_1 = 3
NPU_CORE_0_1_2 = 7
NPU_CORE_ALL = 0xFFFF
CORE_MASKS = {"NPU_CORE_AUTO": NPU_CORE_AUTO, "NPU_CORE_0": NPU_CORE_0, "NPU_CORE_1": NPU_CORE_1,
              "NPU_CORE_2": NPU_CORE_2, "NPU_CORE_0_1": NPU_CORE_0_1,
              "NPU_CORE_0_1_2": NPU_CORE_0_1_2, "NPU_CORE_ALL": NPU_CORE_ALL}

# init_runtime(target=...) and accuracy_analysis(target=...): boards that run models
# (RK2118 is a conversion-only platform in the toolkit).
RUNTIME_TARGETS = ("rv1103", "rv1103b", "rv1106", "rv1106b", "rk3562", "rk3566", "rk3568",
                   "rk3576", "rk3588")
# config(target_platform=...)
CONFIG_PLATFORMS = RUNTIME_TARGETS + ("rk2118",)

FALLBACK_DEVICES = ("cpu", "gpu")
DATA_FORMATS = ("nchw", "nhwc")


class CoreMaskConstants:
    """Mixin: the NPU_CORE_* names as class attributes, as RKNN.NPU_CORE_0 in the toolkit."""

    NPU_CORE_AUTO = NPU_CORE_AUTO
    NPU_CORE_0 = NPU_CORE_0
    NPU_CORE_1 = NPU_CORE_1
    NPU_CORE_2 = NPU_CORE_2
    NPU_CORE_0_1 = NPU_CORE_0_1
    NPU_CORE_0_1_2 = NPU_CORE_0_1_2
    NPU_CORE_ALL = NPU_CORE_ALL
