"""The peer engines bench_models.py times against ours: which are installed, what model file
each runs for a precision (making it when it needs converting), and the runner command.

Every peer runs in a fresh process per measurement through its runner script in bench/
(runner_common.py: same inputs, same timing loop). Peers are optional: a peer whose Python
packages are missing is skipped with a line saying how to install it
(bench/requirements-peers.txt).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = "bench/requirements-peers.txt"


def module_missing(name: str) -> bool:
    # find_spec looks the module up without importing it (openvino takes a second to import).
    return importlib.util.find_spec(name) is None


class Peer:
    key = ""  # --peers name and column key
    label = ""  # table heading
    runner = ""  # script in bench/
    modules: tuple[str, ...] = ()
    install = f"pip install -r {REQUIREMENTS}"
    # precision -> why this peer cannot run it (absent: it can)
    unsupported: dict[str, str] = {}

    def why_unavailable(self) -> str | None:
        """None when installed, else what to install."""
        missing = [m for m in self.modules if module_missing(m)]
        if missing:
            return f"Python module {', '.join(missing)} not found ({self.install})"
        return None

    def model_file(self, work: Path, model: str, onnx_path: Path, peer_onnx_path: Path) -> Path:
        """The file the runner loads. peer_onnx_path is the ONNX model the ONNX peers run for
        this precision: the float model, or its QDQ quantization for int8."""
        return peer_onnx_path

    def command(self, model_file: Path, threads: int, runs: int, warmup: int,
                input_shapes) -> list[str]:
        return [sys.executable, str(HERE / self.runner), str(model_file), "--threads", str(threads),
                "--runs", str(runs), "--warmup", str(warmup)]


class OnnxRuntimePeer(Peer):
    key, label, runner = "ort", "ONNX Runtime", "ort_runner.py"
    modules = ("onnxruntime",)
    install = "scripts/setup.sh installs it into .venv"


class OpenVinoPeer(Peer):
    key, label, runner = "openvino", "OpenVINO", "openvino_runner.py"
    modules = ("openvino",)


def pnnx_executable() -> Path | None:
    """The ONNX-to-ncnn converter shipped in PyPI's pnnx wheel. The wheel declares torch as a
    dependency for its PyTorch export API only; the converter is a standalone executable, so
    `pip install --no-deps pnnx` is enough and importing the pnnx module (which imports torch)
    is avoided."""
    spec = importlib.util.find_spec("pnnx")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / "pnnx"
        if candidate.is_file():
            return candidate
    return None


class NcnnPeer(Peer):
    key, label, runner = "ncnn", "ncnn", "ncnn_runner.py"
    modules = ("ncnn",)
    unsupported = {
        "int8": "ncnn's int8 models are made by its ncnn2table (calibration) and ncnn2int8 "
                "tools, which are not on PyPI (the ncnn wheel holds the runtime only, pnnx "
                "converts float models only)"
    }

    def why_unavailable(self) -> str | None:
        missing = super().why_unavailable()
        if missing:
            return missing
        if pnnx_executable() is None:
            return ("the pnnx converter (ONNX to ncnn) not found (pip install --no-deps pnnx, "
                    f"see {REQUIREMENTS})")
        return None

    def model_file(self, work: Path, model: str, onnx_path: Path, peer_onnx_path: Path) -> Path:
        """Converts the float ONNX model with pnnx (fp16=0: float32 weights), cached in
        WORK/ncnn/."""
        folder = work / "ncnn"
        param = folder / f"{model}.ncnn.param"
        if param.exists() and param.stat().st_mtime >= onnx_path.stat().st_mtime:
            return param
        folder.mkdir(parents=True, exist_ok=True)
        # pnnx writes its outputs beside its input, named after it.
        local = folder / f"{model}.onnx"
        local.unlink(missing_ok=True)
        local.symlink_to(onnx_path.resolve())
        shapes = ",".join("[" + ",".join(map(str, shape)) + "]"
                          for _, shape in onnx_inputs(onnx_path))
        command = [str(pnnx_executable()), local.name, f"inputshape={shapes}", "fp16=0"]
        result = subprocess.run(command, cwd=folder, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=1800)
        if result.returncode != 0 or not param.exists():
            raise RuntimeError(f"pnnx could not convert {onnx_path}:\n{result.stdout[-2000:]}")
        return param

    def command(self, model_file: Path, threads: int, runs: int, warmup: int,
                input_shapes) -> list[str]:
        shapes = ",".join("x".join(map(str, shape)) for shape in input_shapes)
        return super().command(model_file, threads, runs, warmup, input_shapes) + [
            "--input-shapes", shapes]


def onnx_inputs(onnx_path: Path):
    """(name, shape) of the graph's real inputs (not initializers), unknown dimensions as 1."""
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    constants = {i.name for i in model.graph.initializer}
    return [(value.name, [d.dim_value if d.dim_value > 0 else 1
                          for d in value.type.tensor_type.shape.dim])
            for value in model.graph.input if value.name not in constants]


ALL_PEERS = [OnnxRuntimePeer(), OpenVinoPeer(), NcnnPeer()]


def select(names: str | None):
    """The peers named in `names` (comma-separated, default all) that are installed; prints one
    line for each one skipped, saying how to install it."""
    wanted = [n for n in (names or ",".join(p.key for p in ALL_PEERS)).split(",") if n]
    known = {p.key: p for p in ALL_PEERS}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise SystemExit(f"--peers: unknown {', '.join(unknown)} (known: {', '.join(known)})")
    chosen = []
    for name in wanted:
        peer = known[name]
        why = peer.why_unavailable()
        if why:
            print(f"skipping peer {peer.label}: {why}", file=sys.stderr, flush=True)
        else:
            chosen.append(peer)
    return chosen
