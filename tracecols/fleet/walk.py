"""Local files under a folder or matching a glob, each file reached once.

A folder tree may hold symbolic links: one back to a folder above it (a loop, which Python's
`glob` `**` and a naive walk follow until the path is too long, reading every file dozens of
times), links to folders or files also reached directly, hard links. `Walk` follows a
symlinked folder once when it leads out of the tree being walked, never one that leads back
into it, and keeps one path per file (its device and inode): the real path where the file is
also reached through a link. What it passed over is said in one line (`note`).
"""

from __future__ import annotations

import fnmatch
import glob as _glob
import os

_MAGIC = set("*?[")


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None  # a broken link or a file gone meanwhile: reading it says why
    return st.st_dev, st.st_ino


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Walk:
    """One command's discovery: the folders walked, and what was passed over and why."""

    def __init__(self) -> None:
        self.loops: list[str] = []  # symlinked folders leading back to a folder above them
        self.again: list[str] = []  # paths to a folder or file already reached by another path
        self._walked: set[tuple[int, int]] = set()  # folders entered

    def folder(self, root: str, hidden: bool = False) -> list[str]:
        """Every file and folder under `root` (not `root` itself), depth first, sorted;
        hidden folders are entered only with `hidden`."""
        out: list[str] = []
        real_root = os.path.realpath(root)
        top = _identity(root)
        if top:
            self._walked.add(top)
        self._descend(root, real_root, [top] if top else [], hidden, out)
        return out

    def _descend(self, d: str, real_root: str, chain: list[tuple[int, int]], hidden: bool, out: list[str]) -> None:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            return  # unreadable folder: nothing in it is found, as os.walk does
        for name in names:
            p = os.path.join(d, name)
            if not os.path.isdir(p):
                out.append(p)
                continue
            if name.startswith(".") and not hidden:
                continue
            ident = _identity(p)
            if ident is None:
                continue
            if ident in chain:
                self.loops.append(p)
                continue
            if ident in self._walked or (os.path.islink(p) and _inside(os.path.realpath(p), real_root)):
                self.again.append(p)  # walked already, or by its own path inside this tree
                continue
            self._walked.add(ident)
            out.append(p)
            self._descend(p, real_root, [*chain, ident], hidden, out)

    def glob(self, pattern: str) -> list[str]:
        """The files and folders `pattern` matches, as `glob.glob(pattern, recursive=True)`
        but for `**`, which walks folders as `folder` does."""
        if "**" not in pattern:
            return sorted(_glob.glob(pattern))  # no recursion: a loop cannot be followed
        parts = pattern.split(os.sep)
        fixed = 0
        while fixed < len(parts) - 1 and not _MAGIC & set(parts[fixed]):
            fixed += 1
        root = os.sep.join(parts[:fixed]) or ("" if not pattern.startswith(os.sep) else os.sep)
        pats = parts[fixed:]
        if root and not os.path.isdir(root):
            return []
        hidden = any(q.startswith(".") for q in pats)
        base = root or os.curdir
        out = [os.path.join(base, "")] if _matches([], pats) and root else []  # `d/**` is d/ too
        for p in self.folder(base, hidden=hidden):
            rel = os.path.relpath(p, base).split(os.sep)
            if _matches(rel, pats):
                out.append(p if root else os.path.relpath(p, base))
        return out

    def once(self, paths: list[str]) -> list[str]:
        """`paths` with each file kept once (in the first one's place): where a file is reached
        by several paths, the one that is not a symbolic link, else the first."""
        first: dict[tuple[int, int], int] = {}
        keep: list[str] = []
        for p in paths:
            ident = None if os.path.isdir(p) else _identity(p)
            if ident is None or ident not in first:
                if ident is not None:
                    first[ident] = len(keep)
                keep.append(p)
                continue
            i = first[ident]
            if os.path.islink(keep[i]) and not os.path.islink(p):
                keep[i], p = p, keep[i]
            self.again.append(p)
        return keep

    def note(self) -> str | None:
        """One line saying what was passed over, or None."""
        said = []
        if self.loops:
            said.append(f"{len(self.loops)} symlinked folder(s) leading back to a folder above them{_eg(self.loops)}")
        if self.again:
            said.append(f"{len(self.again)} path(s) to a file or folder already reached by another path{_eg(self.again)}")
        if not said:
            return None
        return "skipped " + "; ".join(said) + ": each file is read once"


def _eg(paths: list[str]) -> str:
    return f" ({paths[0]}{', …' if len(paths) > 1 else ''})"


def _matches(parts: list[str], pats: list[str]) -> bool:
    """Whether the path components `parts` match the glob components `pats` (`**`: any number
    of folders; `*` and `**` do not match a name starting with '.', as in `glob`)."""
    if not pats:
        return not parts
    head, rest = pats[0], pats[1:]
    if head == "**":
        for i in range(len(parts) + 1):
            if i and parts[i - 1].startswith("."):
                break
            if _matches(parts[i:], rest):
                return True
        return False
    if not parts:
        return False
    name = parts[0]
    if name.startswith(".") and not head.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, head) and _matches(parts[1:], rest)
