"""The CI gate over a comparison (`Face.compare`), for the API and `tracecols compare --fail-if`:
the rules and their check live in model/gate.py (the rule syntax is documented there); and the
comparison's changes beyond noise in one frame, as the CLI, the report and the MCP server list them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .errors import Unsupported
from .model.diff import beyond_noise as _beyond_noise
from .model.gate import Breach, Rule, RuleError, parse
from .model.gate import check as _check

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Breach", "Rule", "beyond_noise", "check", "rules"]


def rules(texts: Sequence[str]) -> list[Rule]:
    """The rules `texts` (e.g. "step_time:+3%", "op:aten::mm:+5%") parsed; a rule that does not
    parse raises Unsupported with what was expected."""
    try:
        return [parse(t) for t in texts]
    except RuleError as e:
        raise Unsupported("--fail-if", str(e)) from None


def check(rules: Sequence[Rule], comparison: dict[str, pl.DataFrame]) -> tuple[list[Breach], list[str]]:
    """(breaches, unchecked) of `rules` over `comparison` (Face.compare's frames; each rule's kind
    must be among them): the rows beyond noise that break a rule, and a line for each rule row
    that could not be tested or rule that matched no row."""
    return _check(list(rules), comparison)


def beyond_noise(comparison: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """The kernel-class, op and kernel rows of `comparison` that changed beyond noise, as one frame
    (kind, key, per-step means, shift, its interval, q-value), the largest shift first."""
    return _beyond_noise(comparison)
