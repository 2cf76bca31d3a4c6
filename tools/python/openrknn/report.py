"""The texts the toolkit prints: the performance report, the "Memory Profile Info Dump", the
"RKNN VERSION" banner and the device list (layouts from the toolkit's documentation)."""

from __future__ import annotations

_WIDE_RULE = "=" * 99
_RULE = "=" * 54


def size_text(size: int) -> str:
    """Bytes as the toolkit prints them: MiB with two decimals, KiB below one MiB."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.2f} MiB"
    return f"{size / 1024:.2f} KiB"


def performance_text(total_microseconds: int, detail: str, where: str) -> str:
    lines = [_WIDE_RULE, "Performance".center(len(_WIDE_RULE)).rstrip(),
             f"    Run on: {where}", _WIDE_RULE]
    if detail:
        lines.append(detail.rstrip("\n"))
    else:
        lines.append("(per-layer times: init_runtime(perf_debug=True))")
    fps = 1e6 / total_microseconds if total_microseconds > 0 else 0.0
    lines += [f"Total Inference Time(us): {total_microseconds}", f"FPS: {fps:.2f}", _WIDE_RULE]
    return "\n".join(lines) + "\n"


def memory_detail(weight: int, internal: int, total_allocated: int) -> dict:
    """The dict eval_memory returns; `other` is whatever the context holds beyond weights and
    intermediate tensors (inputs, outputs, bookkeeping)."""
    other = max(total_allocated - weight - internal, 0)
    return {"weight_memory": weight, "internal_memory": internal, "other_memory": other,
            "total_memory": weight + internal + other}


def memory_text(detail: dict, model_size: int) -> str:
    lines = [_RULE, "Memory Profile Info Dump".center(len(_RULE)).rstrip(), _RULE,
             "NPU model memory detail(bytes):",
             f"    Weight Memory: {size_text(detail['weight_memory'])}",
             f"    Internal Tensor Memory: {size_text(detail['internal_memory'])}",
             f"    Other Memory: {size_text(detail['other_memory'])}",
             f"    Total Memory: {size_text(detail['total_memory'])}", "",
             "INFO: When evaluating memory usage, we need consider",
             f"the size of model, current model size is: {size_text(model_size)}", _RULE]
    return "\n".join(lines) + "\n"


def sdk_version_text(api_version: str, driver_versions) -> str:
    """`driver_versions`: (component, version) pairs from the backend, e.g. rknn_server, rknnrt."""
    rule = "=" * 46
    lines = [rule, "RKNN VERSION:", f"    API: {api_version}"]
    lines += [f"    DRV: {component}: {version}" for component, version in driver_versions]
    lines.append(rule)
    return "\n".join(lines) + "\n"


def device_list_text(adb_devices) -> str:
    rule = "*" * 25
    return "\n".join([rule, "all device(s) with adb mode:", *adb_devices, rule]) + "\n"
