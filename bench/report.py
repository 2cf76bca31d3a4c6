"""Tables and charts of bench_models.py's measurements.

Measurements are `samples[(model, precision, threads)][engine]`: one figure (ms) per round,
each a process's median. Engine "ours" is OpenRKNN; the others are peers.py keys. A peer that
cannot run a precision has no figures there and shows "n/a".
"""

from __future__ import annotations

import statistics
from pathlib import Path

# One colour per peer in the charts, in peers.ALL_PEERS order.
COLOURS = ["#3b75af", "#e1812c", "#3a923a", "#c03d3e", "#9372b2"]


def median_with_range(values) -> str:
    if not values:
        return "n/a"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def ratio(ours, peer):
    """Median ours / median peer (below 1: we are faster), or None without figures."""
    if not ours or not peer:
        return None
    return statistics.median(ours) / statistics.median(peer)


def ratio_text(value) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def latency_table(samples, peers, threads_column=True):
    heading = "| model | precision |" + (" threads |" if threads_column else "")
    heading += " OpenRKNN ms (min-max) |" + "".join(f" {p.label} ms (min-max) |" for p in peers)
    heading += "".join(f" ours/{p.label} |" for p in peers)
    rule = "|---|---|" + ("---:|" if threads_column else "") + "---:|" * (1 + 2 * len(peers))
    lines = [heading, rule]
    for (model, precision, threads), engines in samples.items():
        cells = [model, precision] + ([str(threads)] if threads_column else [])
        cells.append(median_with_range(engines["ours"]))
        cells += [median_with_range(engines.get(p.key, [])) for p in peers]
        cells += [ratio_text(ratio(engines["ours"], engines.get(p.key, []))) for p in peers]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown(samples, cpu_samples, peers, header_lines, notes):
    """The report: header lines, wall-time table, one-thread CPU-time table, then notes."""
    text = list(header_lines) + [""] + latency_table(samples, peers) + [""]
    single = {key: engines for key, engines in cpu_samples.items() if key[2] == 1}
    if single:
        # On a busy shared machine the wall times above include other processes' time slices.
        text += ["One thread, process CPU time per run (the latency without the time other "
                 "processes held the core; same runs as above):", ""]
        text += latency_table(single, peers, threads_column=False) + [""]
    return text + list(notes)


def chart_rows(samples, peers):
    """[(configuration label, [ratio ours/peer or None per peer])]."""
    return [(f"{model} {precision} {threads}t",
             [ratio(engines["ours"], engines.get(p.key, [])) for p in peers])
            for (model, precision, threads), engines in samples.items()]


CHART_TITLE = "OpenRKNN median latency / peer's (lower is better for us; 1.0 = parity)"


def write_svg(rows, peer_labels, path):
    """Grouped horizontal bars, one group per configuration, one bar per peer."""
    bar, gap, left, width = 14, 10, 200, 820
    group = bar * len(peer_labels) + gap
    top_margin = 50
    height = top_margin + group * len(rows) + 30
    largest = max([1.5] + [r for _, ratios in rows for r in ratios if r is not None])
    scale = (width - left - 60) / largest
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="10" y="18" font-size="14">{CHART_TITLE}</text>']
    for index, label in enumerate(peer_labels):
        x = left + index * 150
        out.append(f'<rect x="{x}" y="28" width="12" height="12" fill="{COLOURS[index]}"/>')
        out.append(f'<text x="{x + 16}" y="38">ours / {label}</text>')
    for row_index, (label, ratios) in enumerate(rows):
        y0 = top_margin + row_index * group
        out.append(f'<text x="{left - 8}" y="{y0 + group / 2 + 2:.1f}" '
                   f'text-anchor="end">{label}</text>')
        for index, value in enumerate(ratios):
            y = y0 + index * bar
            if value is None:
                out.append(f'<text x="{left + 4}" y="{y + bar - 3}" fill="#888">n/a</text>')
                continue
            out.append(f'<rect x="{left}" y="{y + 1}" width="{value * scale:.1f}" '
                       f'height="{bar - 2}" fill="{COLOURS[index]}"/>')
            out.append(f'<text x="{left + value * scale + 4:.1f}" y="{y + bar - 3}">'
                       f'{value:.2f}</text>')
    x = left + scale
    out.append(f'<line x1="{x:.1f}" y1="{top_margin - 4}" x2="{x:.1f}" y2="{height - 20}" '
               'stroke="#333" stroke-dasharray="4 3"/>')
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")


def write_png(rows, peer_labels, path) -> bool:
    """The same chart through matplotlib; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    bar = 0.8 / max(1, len(peer_labels))
    height = 0.3 * len(rows) * max(1, len(peer_labels)) + 1.5  # inches
    figure, axes = plt.subplots(figsize=(9, height))
    for index, label in enumerate(peer_labels):
        positions = [row + index * bar for row in range(len(rows))]
        values = [ratios[index] if ratios[index] is not None else 0.0 for _, ratios in rows]
        axes.barh(positions, values, height=bar, color=COLOURS[index], label=f"ours / {label}")
        for position, (_, ratios) in zip(positions, rows):
            text = "n/a" if ratios[index] is None else f"{ratios[index]:.2f}"
            axes.text((ratios[index] or 0.0) + 0.02, position, text, va="center", fontsize=7)
    axes.set_yticks([row + bar * (len(peer_labels) - 1) / 2 for row in range(len(rows))])
    axes.set_yticklabels([label for label, _ in rows], fontsize=8)
    axes.invert_yaxis()
    axes.axvline(1.0, color="#333", linestyle="--", linewidth=1)
    axes.set_xlabel("median latency ratio, OpenRKNN / peer")
    axes.set_title(CHART_TITLE, fontsize=10)
    known = [r for _, ratios in rows for r in ratios if r is not None]
    axes.set_xlim(0, max([1.2] + known) * 1.12)
    figure.legend(fontsize=8, loc="lower center", ncol=max(1, len(peer_labels)))
    figure.tight_layout(rect=(0, 0.4 / height, 1, 1))  # the legend's 0.4 inch at the bottom
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True
