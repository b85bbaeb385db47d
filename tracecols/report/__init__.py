"""The HTML report (`tracecols report`): one self-contained, offline file of charts and tables."""

from typing import TYPE_CHECKING

__all__ = ["render", "save", "write"]

if TYPE_CHECKING:
    from .html import render, save, write
else:

    def __getattr__(name: str) -> object:
        # imported on first use: the summary's formatters (units, notes) live in this package too,
        # and `tracecols analyze` has no use for the page's charts and tables
        if name in __all__:
            from . import html

            return getattr(html, name)
        raise AttributeError(f"module 'tracecols.report' has no attribute {name!r}")
