"""Arguments several commands share."""


def capture(parser):
    """--capture DIR: the graph capture traces that graph replays are matched against (docs/graphs.md)."""
    parser.add_argument(
        "--capture",
        metavar="DIR",
        help="folder of CUDA/HIP graph capture traces: graph-replayed kernels go to the ops that captured them",
    )


def keep_secrets(parser):
    """--keep-secrets, on every command that writes or prints trace content (model/secrets.py)."""
    parser.add_argument(
        "--keep-secrets",
        action="store_true",
        help="keep tokens, passwords and keys (in metadata, names and args) as they are (redacted by default)",
    )


def _rule_threshold(text: str) -> tuple[str, float]:
    import argparse
    import math

    rule, sep, value = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not sep or not rule.strip() or not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"{text!r}: expected RULE=NUMBER, e.g. host_idle=2.5")
    return rule.strip(), number


def rule_thresholds(parser):
    """--rule-threshold RULE=VALUE (repeatable): a finding rule's threshold instead of its default
    (docs/analyses.md, Findings; an unknown rule is an error naming the rules)."""
    parser.add_argument(
        "--rule-threshold",
        metavar="RULE=VALUE",
        type=_rule_threshold,
        action="append",
        default=[],
        help="a finding rule's threshold instead of its default, e.g. host_idle=2.5 (repeatable)",
    )
