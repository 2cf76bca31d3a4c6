"""bench/bench_models.py end to end: our runtime and every installed peer on the smallest
benchmark model, one round of two runs, fp32 and int8, one thread. Checks that the markdown
report, the SVG chart (and the PNG one when matplotlib is installed) are written and parse,
that every installed peer has its columns and every missing one is reported as skipped with
how to install it. Timings are never asserted: they are only checked to be numbers."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import peers  # noqa: E402  (bench/peers.py)

MODEL = "mobilenet_v2"  # the smallest of the benchmark's models
FIGURE = re.compile(r"^(\d+\.\d+) \((\d+\.\d+)-(\d+\.\d+)\)$")


def build_dir() -> Path:
    build = os.environ.get("ORKNN_BUILD_DIR")
    if not build:
        pytest.skip("ORKNN_BUILD_DIR is not set (ctest sets it)")
    return Path(build)


def table_after(lines, heading_start):
    """Rows (lists of cells) of the first markdown table whose heading starts as given."""
    for index, line in enumerate(lines):
        if line.startswith(heading_start):
            rows = []
            for row in lines[index:]:
                if not row.startswith("|"):
                    break
                rows.append([cell.strip() for cell in row.strip().strip("|").split("|")])
            return rows[0], rows[2:]
    raise AssertionError(f"no table starting {heading_start!r} in the report")


def check_figure(cell: str, may_be_missing: bool):
    if cell == "n/a":
        assert may_be_missing, "a figure is missing where the engine ran"
        return
    match = FIGURE.match(cell)
    assert match, f"not 'median (min-max)': {cell!r}"
    median, low, high = (float(g) for g in match.groups())
    assert low <= median <= high and low > 0.0


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    build = build_dir()
    for tool in ("bench/bench_model", "tools/rknn-convert/rknn-convert"):
        assert (build / tool).exists(), f"{build / tool} is not built"
    out = tmp_path_factory.mktemp("bench")
    command = [sys.executable, str(ROOT / "bench/bench_models.py"), "--build", str(build),
               "--work", str(out / "work"), "--models", MODEL, "--precisions", "fp32,int8",
               "--threads", "1", "--rounds", "1", "--runs", "2", "--warmup", "1",
               "--markdown", str(out / "report.md"), "--svg", str(out / "report.svg"),
               "--png", str(out / "report.png")]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            timeout=540)
    assert result.returncode == 0, result.stderr[-3000:]
    installed = [p for p in peers.ALL_PEERS if p.why_unavailable() is None]
    return out, result, installed


def test_markdown_has_ours_and_every_installed_peer(bench_run):
    out, result, installed = bench_run
    lines = (out / "report.md").read_text().splitlines()
    assert result.stdout.strip().splitlines()[0] == lines[0]
    heading, rows = table_after(lines, "| model | precision | threads |")
    expected = (["model", "precision", "threads", "OpenRKNN ms (min-max)"] +
                [f"{p.label} ms (min-max)" for p in installed] +
                [f"ours/{p.label}" for p in installed])
    assert heading == expected
    assert [(r[0], r[1], r[2]) for r in rows] == [(MODEL, "fp32", "1"), (MODEL, "int8", "1")]
    for row in rows:
        assert len(row) == len(heading)
        check_figure(row[3], may_be_missing=False)
        for peer, cell in zip(installed, row[4:4 + len(installed)]):
            check_figure(cell, may_be_missing=row[1] in peer.unsupported)
        for peer, cell in zip(installed, row[4 + len(installed):]):
            if cell == "n/a":
                assert row[1] in peer.unsupported
            else:
                assert float(cell) > 0.0
    # The one-thread CPU-time table has the same engines.
    cpu_heading, cpu_rows = table_after(lines, "| model | precision | OpenRKNN")
    assert cpu_heading == [c for c in expected if c != "threads"]
    assert len(cpu_rows) == 2


def test_missing_peers_are_reported_with_how_to_install(bench_run):
    out, result, installed = bench_run
    report = (out / "report.md").read_text()
    for peer in peers.ALL_PEERS:
        if peer in installed:
            assert f"skipping peer {peer.label}" not in result.stderr
            continue
        assert f"skipping peer {peer.label}" in result.stderr
        assert "install" in peer.why_unavailable()
        assert f"Peer not run: {peer.label}" in report
    for peer in installed:
        for precision, why in peer.unsupported.items():
            assert why in report, f"{peer.label} {precision}: the reason is not in the report"


def test_per_op_type_time_for_ours(bench_run):
    out, _, _ = bench_run
    lines = (out / "report.md").read_text().splitlines()
    for precision in ("fp32", "int8"):
        title = f"OpenRKNN per-op-type time, {MODEL} {precision}, 1 thread(s), one profiled run:"
        assert title in lines
        heading, rows = table_after(lines[lines.index(title):], "| op type | us | share |")
        operators = {row[0]: int(row[1]) for row in rows}
        assert "Conv" in operators and operators["Conv"] >= 0
        assert all(row[2].endswith("%") for row in rows)


def test_svg_chart_parses_with_one_bar_per_ratio(bench_run):
    out, _, installed = bench_run
    root = ElementTree.parse(out / "report.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    namespace = "{http://www.w3.org/2000/svg}"
    texts = [t.text for t in root.iter(f"{namespace}text")]
    assert f"{MODEL} fp32 1t" in texts and f"{MODEL} int8 1t" in texts
    legend_squares = len(installed)
    ratios = sum(1 for precision in ("fp32", "int8") for p in installed
                 if precision not in p.unsupported)
    assert len(list(root.iter(f"{namespace}rect"))) == legend_squares + ratios


def test_png_chart_when_matplotlib_is_installed(bench_run):
    out, result, _ = bench_run
    if importlib.util.find_spec("matplotlib") is None:
        assert "matplotlib is not installed" in result.stderr
        assert not (out / "report.png").exists()
    else:
        assert (out / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_peer_not_installed_is_skipped_with_the_install_line(monkeypatch, capsys):
    monkeypatch.setattr(peers, "module_missing", lambda name: name == "openvino")
    chosen = peers.select("ort,openvino")
    assert [p.key for p in chosen] == ["ort"]
    message = capsys.readouterr().err
    assert "skipping peer OpenVINO" in message and peers.REQUIREMENTS in message


def test_unknown_peer_is_refused():
    with pytest.raises(SystemExit, match="unknown tensorflow"):
        peers.select("ort,tensorflow")


def test_paired_compare_table(bench_run):
    """bench/paired_compare.py on the models bench_models.py prepared: one row per precision,
    medians and pair ratios that are positive numbers (never compared with anything)."""
    out, _, _ = bench_run
    command = [sys.executable, str(ROOT / "bench/paired_compare.py"), "--build", str(build_dir()),
               "--work", str(out / "work"), "--models", MODEL, "--precisions", "fp32,int8",
               "--threads", "1", "--pairs", "2", "--markdown", str(out / "paired.md")]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = (out / "paired.md").read_text().splitlines()
    heading, rows = table_after(lines, "| model | precision | threads |")
    assert heading[-2:] == ["median of pair ratios", "pair ratio min-max"]
    assert [(r[0], r[1], r[2]) for r in rows] == [(MODEL, "fp32", "1"), (MODEL, "int8", "1")]
    for row in rows:
        ours, peer, ratio = (float(cell) for cell in row[3:6])
        low, high = (float(x) for x in row[6].split("-"))
        assert ours > 0.0 and peer > 0.0 and 0.0 < low <= ratio <= high


def test_paired_compare_rejects_no_pairs():
    result = subprocess.run([sys.executable, str(ROOT / "bench/paired_compare.py"), "--build",
                             "unused", "--pairs", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode != 0 and "--pairs must be at least 1" in result.stderr
