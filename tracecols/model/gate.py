"""Regression rules for a CI gate over a comparison (`tracecols compare --fail-if RULE`).

A rule is `WHAT:LIMIT`:

    step_time:+3%            the step time grew by 3 % or more
    gpu_busy:+5%             the device busy time per step (also gpu_idle)
    idle:+2pp                the idle share of the step grew by 2 percentage points or more
    op:aten::mm:+5%          one row of a comparison: op, callpath, module, phase, kernel or kernel_class,
    kernel_class:gemm:+5%    its key after the first colon (a name may hold colons itself, and
    kernel:*gemm*:+10%       may be a glob: every matching row is checked on its own)

A limit `+N%` breaks when the change is N % or more of A's time per step, `-N%` when it is a
drop of N % or more; `pp` compares shares of the step in percentage points. A row breaks a
rule only when its change is beyond noise (the comparison's `significant`): a rule never fires
on a change the samples cannot tell from noise, and a comparison whose sides have one sample
each (traces without profiler steps) cannot break one: `check` lists those rows, and the
rules that matched no row, apart.
"""

import fnmatch
import re
from dataclasses import dataclass

import polars as pl

KEYED = {
    "op": "name",
    "callpath": "callpath",
    "kernel": "name",
    "kernel_class": "kernel_class",
    "module": "module",
    "phase": "phase",
}
METRICS = {"step_time": "step_time", "gpu_busy": "gpu_busy", "gpu_idle": "gpu_idle", "idle": "gpu_idle"}
_LIMIT = re.compile(r"^([+-])(\d+(?:\.\d+)?)(%|pp)$")


class RuleError(ValueError):
    """A rule that does not parse; its message says what was expected."""


@dataclass(frozen=True)
class Rule:
    text: str
    kind: str  # "step" or a comparison kind of KEYED
    key: str  # a metric of the step rows, or a glob over the kind's key
    sign: int  # +1: a growth breaks it; -1: a drop does
    limit: float
    unit: str  # "%" or "pp"


@dataclass(frozen=True)
class Breach:
    rule: str
    kind: str
    key: str
    change: float  # in the rule's unit
    q_value: float | None


def parse(text: str) -> Rule:
    head, sep, limit = text.rpartition(":")
    m = _LIMIT.match(limit.strip())
    if not sep or not m:
        raise RuleError(f"rule {text!r}: expected WHAT:+N% or WHAT:-N% (or idle:+Npp) at the end")
    sign, value, unit = (1 if m.group(1) == "+" else -1), float(m.group(2)), m.group(3)
    kind, _, key = head.partition(":")
    if kind in METRICS and not key:
        if (unit == "pp") != (kind == "idle"):
            raise RuleError(f"rule {text!r}: idle takes pp (idle:+2pp); the other step metrics take %")
        return Rule(text, "step", METRICS[kind], sign, value, unit)
    if kind in KEYED and key:
        if unit != "%":
            raise RuleError(f"rule {text!r}: a {kind} rule takes a limit in % (e.g. {kind}:{key}:+5%)")
        return Rule(text, kind, key, sign, value, unit)
    raise RuleError(
        f"rule {text!r}: expected step_time, gpu_busy, gpu_idle or idle (no name), or op, callpath, module, phase, "
        "kernel or kernel_class followed by :NAME"
    )


def _idle_share_change(steps: pl.DataFrame) -> float | None:
    row = {r["metric"]: r for r in steps.iter_rows(named=True)}
    t, i = row.get("step_time"), row.get("gpu_idle")
    if not t or not i or not t["per_step_ns_a"] or not t["per_step_ns_b"]:
        return None
    return 100.0 * (i["per_step_ns_b"] / t["per_step_ns_b"] - i["per_step_ns_a"] / t["per_step_ns_a"])


def check(rules: list[Rule], frames: dict[str, pl.DataFrame]) -> tuple[list[Breach], list[str]]:
    """(breaches, unchecked): the rows that break a rule, and a line for each rule row whose change
    could not be tested against noise or rule that matched no row. `frames` holds the comparison
    of each kind a rule names."""
    breaches: list[Breach] = []
    untestable: list[str] = []
    for rule in rules:
        frame = frames[rule.kind]
        col = "metric" if rule.kind == "step" else KEYED[rule.kind]
        rows = [r for r in frame.iter_rows(named=True) if r[col] is not None and fnmatch.fnmatchcase(r[col], rule.key)]
        if not rows:
            untestable.append(f"{rule.text}: no {rule.kind} row matches {rule.key!r}")
        for r in rows:
            if r["significant"] is None:
                untestable.append(f"{rule.text}: {r[col]}: one sample a side, no noise to test against")
                continue
            if rule.unit == "pp":
                change = _idle_share_change(frame)
            else:
                change = r["shift_pct"]
            if r["significant"] and change is not None and rule.sign * change >= rule.limit:
                breaches.append(Breach(rule.text, rule.kind, r[col], change, r["q_value"]))
    return breaches, untestable
