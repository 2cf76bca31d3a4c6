"""openrknn.api.RKNNLite: the toolkit-lite API, for running a .rknn model on the board itself
(load_rknn, init_runtime(core_mask), inference, get_sdk_version, release) in the local
librknnrt."""

from __future__ import annotations

from .calls import api_method, require
from .constants import NPU_CORE_AUTO
from .runtime_api import RuntimeApi, core_mask_options


class RKNNLite(RuntimeApi):
    @api_method(failure=-1)
    def init_runtime(self, core_mask=NPU_CORE_AUTO):
        """Loads the model into this process's librknnrt on the chosen NPU cores. 0 / -1."""
        self._start_runtime(core_mask_options(core_mask))
        return 0

    @api_method(failure=None)
    def inference(self, inputs=None, data_type=None, data_format=None, inputs_pass_through=None,
                  get_frame_id=False):
        """Runs the model; the outputs as a list of numpy arrays (None on failure). The input
        type is taken from each array (data_type is accepted for compatibility)."""
        require(inputs is not None, "inputs is required: a list of numpy arrays")
        require(not get_frame_id, "get_frame_id is not supported (no asynchronous mode)")
        return self._run_inference(inputs, data_format, inputs_pass_through)
