"""The HTML report (`tracecols report`): one self-contained, offline file of charts and tables."""

from .html import render, save, write

__all__ = ["render", "save", "write"]
