"""The HTML page of a comparison (`tracecols compare A B --html OUT`): the step metrics, the
changes beyond noise, and each comparison's largest changes, from Face.compare's frames."""

import datetime
from collections.abc import Mapping

import polars as pl

from ..gate import beyond_noise
from ..version import __version__
from .html import document, save_html
from .labels import html_text as _e
from .tables import table

_NOISE_HEAD = ["A / step", "B / step", "shift", "shift %", "95% CI low", "high", "q", "beyond noise"]
_NOISE_COLS = ["per_step_ns_a", "per_step_ns_b", "shift_ns", "shift_pct", "ci_low_ns", "ci_high_ns", "q_value", "significant"]
_NOISE_KINDS = ["ns", "ns", "ns", "pct", "ns", "ns", "n", "flag"]
_KEYS = {
    "step": "metric",
    "phase": "phase",
    "kernel_class": "kernel_class",
    "kernel": "name",
    "op": "name",
    "shape": "name",
    "module": "module",
    "callpath": "callpath",
}
_TITLES = {
    "phase": "Step phases",
    "kernel_class": "Kernel classes",
    "op": "Ops (by name)",
    "kernel": "Kernels (by name)",
    "module": "Ops by module",
    "callpath": "Call paths",
}


def _section(sid: str, title: str, *parts: str) -> str:
    return f'<section id="{sid}"><h2>{_e(title)}</h2>{"".join(parts)}</section>'


def _rows(frame: pl.DataFrame, cols: list[str]) -> list[tuple]:
    return frame.select(cols).rows()


def render(frames: Mapping[str, pl.DataFrame], a: str, b: str, top: int = 50) -> str:
    """The page for the comparison `frames` ({kind: frame}) of side `a` against side `b`."""
    sections = []
    steps = frames.get("step")
    if steps is not None:
        n_a, n_b = steps["steps_a"][0], steps["steps_b"][0]
        note = (
            f"<p>Samples: {n_a} step(s) of A, {n_b} of B. Beyond noise: a Mann-Whitney q-value below 0.05 "
            "and a shift of at least the minimum change (docs/diff.md). Shift: the Hodges-Lehmann estimate "
            "of B − A per step, with its 95 % interval.</p>"
        )
        sections.append(
            _section(
                "steps",
                "Steps",
                note,
                table("t-steps", ["metric"] + _NOISE_HEAD, _rows(steps, ["metric"] + _NOISE_COLS), ["name"] + _NOISE_KINDS),
            )
        )
    found = frames.get("finding")
    if found is not None and found.height:
        dev = ["device"] if "device" in found.columns else []
        cols = ["status", "rule", "kind", *dev, "stake_ns_a", "stake_ns_b", "delta_stake_ns", "summary_a", "summary_b"]
        sections.append(
            _section(
                "findings",
                "Findings: appeared, disappeared, in both",
                table(
                    "t-findings",
                    ["finding", "rule", "kind", *dev, "at stake A", "at stake B", "Δ", "A: what", "B: what"],
                    _rows(found, cols),
                    ["name", "name", "name", *(["n"] * len(dev)), "ns", "ns", "ns", "name", "name"],
                ),
            )
        )
    if set(frames) & {"kernel_class", "op", "kernel"}:  # the comparisons beyond_noise reads
        sig = beyond_noise(frames)
        sections.append(
            _section(
                "beyond-noise",
                "Changes beyond noise",
                table(
                    "t-beyond",
                    ["kind", "key"] + _NOISE_HEAD,
                    _rows(sig, ["kind", "key"] + _NOISE_COLS),
                    ["name", "name"] + _NOISE_KINDS,
                ),
            )
        )
    for kind, title in _TITLES.items():
        f = frames.get(kind)
        if f is None:
            continue
        key = _KEYS[kind]
        head = ["status", key, "n A", "n B", "GPU A", "GPU B", "Δ GPU"] + _NOISE_HEAD
        cols = ["status", key, "count_a", "count_b", "gpu_ns_a", "gpu_ns_b", "delta_gpu_ns"] + _NOISE_COLS
        kinds = ["name", "name", "n", "n", "ns", "ns", "ns"] + _NOISE_KINDS
        more = f"<p>The {top} largest changes in GPU time of {f.height}.</p>" if f.height > top else ""
        sections.append(_section(f"cmp-{kind}", title, more, table(f"t-{kind}", head, _rows(f.head(top), cols), kinds)))
    title = "tracecols comparison"
    sub = f"A {a} · B {b} · tracecols {__version__} · {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}"
    return document(title, sub, sections)


def save(frames: Mapping[str, pl.DataFrame], a: str, b: str, out_path: str) -> str:
    """Render the comparison page and write it atomically; returns the path."""
    return save_html(render(frames, a, b), out_path)
