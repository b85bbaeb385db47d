"""Redaction of secrets, wherever trace content leaves tracecols.

Traces carry secrets by accident: trace writers copy the environment and the command line into
the top-level metadata (an `HF_TOKEN`, `--hf-token hf_…`, cloud keys, database passwords), and
user annotations, record_function names and op arguments can hold a token too. Every string a
trace brings is redacted on its way into the base tables — the metadata (`traces.metadata`,
`traces.distributed_info`, `devices.properties`), every string column of `events` (`name`,
`args`, `extra`, the promoted string args) and so everything built from them: views, Parquet
outputs, lakes, the DuckDB export, `sql` results, the HTML report, `diff` — and on its way into
the augmented trace (`augment`) and the linked Execution Trace (`link`). `keep_secrets=True`
(`--keep-secrets`) keeps every byte as it was. This module is the one definition of the rules;
everything else calls it.

The rules, what they catch and what they knowingly leave, are documented in docs/schema.md
("Secrets"); in short:

By key. A key — of a JSON object, or a `KEY=value`, `KEY = value`, `KEY: value`, `--flag value`
or `--flag=value` inside a string (not `pkg==1.0`, a version pin) — that names a secret
(key_kind: `secret`, `passw`, `auth`, `api_key`, `AccountKey`, `MYSQL_PWD`, `--db-pass`, `sig`,
`HF_TOKEN`, …) has its value replaced by `<redacted>`, the key kept; an object or list under it
goes as one. A value that carries nothing is kept: null, true/false, an empty string, and, under
a key whose only hint is `token`, a number (`max_token: 4096` is a count). An env list entry,
`{"name": "HF_TOKEN", "value": …}`, counts as the key `HF_TOKEN` for its value.

By value. The credential formats of model/credential_formats.py are replaced anywhere in a
string, whatever key they sit under.

Speed. Redaction runs on every ingest, so the string columns are first searched with one RE2
expression (PREFILTER, through pyarrow.compute in C++; the same expression serves DuckDB when a
store is redacted on its way out) that every secret above must match — once per table over the
distinct values of all its string columns, which hashing finds faster than the expression runs
over every row — and only the few values it finds go through the exact rules in Python.
"""

import functools
import json
import re
from decimal import Decimal
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc

from .credential_formats import FORMATS as CREDENTIAL_FORMATS
from .credential_formats import exact

REDACTED = "<redacted>"
METADATA_TABLES = ("traces", "devices")  # small: a reader redacts them whole, whatever the store says

# --- the key rule ------------------------------------------------------------------------
_SECRET_NAME = re.compile(
    r"secret|passw|passphrase|passcode|credential|creds(?![a-z])|cookie|auth(?!or(?!iz))"
    r"|(?:api|private|access|session|account)[_.-]?key(?:s|(?![a-z]))|(?:access|amz)[_.-]?signature|(?:^|[_.-])(?:key|pat)$"
    r"|(?:^|[^a-z])(?:pw|pwd|pass|sig)(?:[^a-z]|$)",  # words that are too short to look for inside others
    re.IGNORECASE | re.ASCII,
)
_CAMEL_KEY = re.compile(r"[a-z0-9]Key$", re.ASCII)  # `AccountKey`, `accountKey`; not `monkey`
_SHELL_DIRECTORIES = frozenset({"pwd", "oldpwd"})  # the shell's working directory, not a password
# `token` starting a word (HF_TOKEN, --auth-token, accessToken), not inside one (tiktoken)
_TOKEN_NAME = re.compile(r"(?i:(?<![a-z])token(?![si]))|(?<=[a-z])Token(?![sSiI])", re.ASCII)
_NOTHING = frozenset({"", "true", "false", "none", "null", REDACTED})
_COUNT = re.compile(r"[+-]?\d+(?:\.\d+)?")


def key_kind(key):
    """ "secret" for a key that names a secret, "token" for one whose only hint is `token`, else None."""
    if not isinstance(key, str):
        return None
    k = key.lstrip("-")
    if (_SECRET_NAME.search(k) or _CAMEL_KEY.search(k)) and k.lower() not in _SHELL_DIRECTORIES:
        return "secret"
    return "token" if _TOKEN_NAME.search(k) else None


def is_secret_key(key):
    return key_kind(key) is not None


def _carries_nothing(value, kind):
    """Whether the value under a secret-looking key is kept (module docstring: null, booleans, counts)."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, str):
        return value.strip().lower() in _NOTHING or (kind == "token" and _COUNT.fullmatch(value) is not None)
    return kind == "token" and isinstance(value, (int, float, Decimal))


# --- the value rule ----------------------------------------------------------------------
# Each format (model/credential_formats.py): the whole match is the secret, except the groups
# `pre` and `post`, which stay.
_A = re.ASCII


@functools.cache
def _formats() -> list[tuple[str, re.Pattern[str]]]:
    """Every format compiled, when a string first passes PREFILTER: most traces hold no such
    string, and compiling them all costs a small trace's command more than reading it does."""
    return [(name, re.compile(exact(core, py), _A)) for name, core, py in CREDENTIAL_FORMATS]


def __getattr__(name: str) -> object:
    if name == "FORMATS":  # [(name, compiled expression)] of every format, in the order they apply
        return _formats()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# a key and its separator inside a string: `--flag `, `--flag=`, `KEY=`, `KEY = `, `KEY: `, `"KEY": `
# (not `KEY==`, a version pin, nor `KEY= next`, an empty value)
_KEY_IN_TEXT = re.compile(
    r"""(?<![\w.-])(?:(?P<flag>--?[A-Za-z][\w.-]*)(?P<fsep>=(?!=)|[ \t]+)"""
    r"""|(?P<q>["']?)(?P<name>[A-Za-z_][\w.-]*)(?P=q)"""
    r"""(?:[ \t]+=[ \t]+|=(?!=)|[ \t]*:(?![:/])[ \t]*))""",
    _A,
)
_VALUE_IN_TEXT = re.compile(
    r"""(?:(?i:bearer|basic)[ \t]+)?(?:<redacted>|"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'"""
    r"""|(?P<bare>[^\s"'&;,<>(){}\[\]]+(?:<redacted>)?))""",
    _A,
)

# One RE2 expression (also valid for Python's re) that every string holding a secret matches:
# the key rule's hints, the structure of an env list entry and every credential format's core,
# for a whole column at C++ speed (pyarrow, DuckDB).
_KEY_HINTS = (
    r"(?i:token(?:[^si]|$)|secret|passw|passphrase|passcode|cred|cookie|auth"
    r"|(?:api|private|access|session|account)[_.-]?key|(?:access|amz)[_.-]?signature"
    r"|key\b|pat\b|(?:^|[^a-z])(?:pw|pwd|pass|sig)(?:[^a-z]|$))"
)
# Each format's counted repetition `{n,m}` becomes `{min(n, 4),}`: still a superset, and an
# expression RE2 compiles in a few milliseconds rather than twenty (pyarrow compiles it on every call).
PREFILTER = "|".join(
    [_KEY_HINTS] + [re.sub(r"\{(\d+)(?:,\d*)?\}", lambda m: f"{{{min(int(m[1]), 4)},}}", c) for _, c, _ in CREDENTIAL_FORMATS]
)
_PREFILTER = re.compile(PREFILTER, _A)


def _keep_ends(m):
    d = m.groupdict()
    return (d.get("pre") or "") + REDACTED + (d.get("post") or "")


def has_candidate(s):
    """Whether the string could hold a secret (PREFILTER; long strings searched by RE2)."""
    if len(s) > 4096:
        return bool(pc.match_substring_regex(pa.array([s], pa.large_string()), PREFILTER)[0].as_py())
    return _PREFILTER.search(s) is not None


# an env list entry written out in a string (a Python repr, JSON inside a string): its name and
# value, quoted, in either order
_ENTRY_IN_TEXT = re.compile(
    r"""(?P<q1>["'])name(?P=q1)[ \t]*:[ \t]*(?P<q2>["'])(?P<name>[^"'\n]*)(?P=q2)[ \t]*,[ \t]*"""
    r"""(?P<q3>["'])value(?P=q3)[ \t]*:[ \t]*(?P<q4>["'])(?P<value>[^"'\n]*)(?P=q4)"""
    r"""|(?P<r1>["'])value(?P=r1)[ \t]*:[ \t]*(?P<r2>["'])(?P<value2>[^"'\n]*)(?P=r2)[ \t]*,[ \t]*"""
    r"""(?P<r3>["'])name(?P=r3)[ \t]*:[ \t]*(?P<r4>["'])(?P<name2>[^"'\n]*)(?P=r4)""",
    re.ASCII | re.IGNORECASE,
)


def _entries_in_text(s):
    """(s with the value of every env list entry written in it redacted, how many)."""
    n = 0

    def one(m):
        nonlocal n
        g = "value" if m.group("value") is not None else "value2"
        kind = key_kind(m.group("name") if g == "value" else m.group("name2"))
        if kind is None or _carries_nothing(m.group(g), kind):
            return m.group()
        n += 1
        a, b = m.span(g)
        return m.group()[: a - m.start()] + REDACTED + m.group()[b - m.start() :]

    return _ENTRY_IN_TEXT.sub(one, s), n


def _redact_text(s):
    """(s with every secret replaced, how many) — the value rule, env list entries, then the key
    rule inside the string."""
    n = 0
    for _, rx in _formats():
        s, k = rx.subn(_keep_ends, s)
        n += k
    if "alue" in s:
        s, k = _entries_in_text(s)
        n += k
    out, last = [], 0
    for m in _KEY_IN_TEXT.finditer(s):
        if m.start() < last:
            continue  # inside a value already redacted
        flag = m.group("flag")
        kind = key_kind(flag or m.group("name"))
        if kind is None:
            continue
        v = _VALUE_IN_TEXT.match(s, m.end())
        if v is None or (flag and m.group("fsep") != "=" and s.startswith("-", m.end())):
            continue  # no value, or the next --flag
        g = "dq" if v.group("dq") is not None else "sq" if v.group("sq") is not None else "bare"
        if v.group(g) is None or _carries_nothing(v.group(g), kind):
            continue
        a, b = v.span(g)
        out += [s[last:a], REDACTED]
        last = b
        n += 1
    if out:
        out.append(s[last:])
        s = "".join(out)
    return s, n


def redact_text(s):
    """A plain string with its secrets replaced (module docstring)."""
    if not isinstance(s, str) or not has_candidate(s):
        return s
    return _redact_text(s)[0]


# --- JSON objects (metadata, Execution Trace nodes) ---------------------------------------
def _walk(obj, n):
    if isinstance(obj, dict):
        out = {}
        entry = _entry_kind(obj)
        for k, v in obj.items():
            kind = entry if k == "value" and entry is not None else key_kind(k)
            k2 = _str(k, n) if isinstance(k, str) else k
            if kind is not None and not _carries_nothing(v, kind):
                out[k2] = REDACTED
                n[0] += 1
            else:
                out[k2] = _walk(v, n)
        return out
    if isinstance(obj, list):
        return [_walk(v, n) for v in obj]
    if isinstance(obj, str):
        return _str(obj, n)
    return obj


def _entry_kind(obj):
    """The key kind of an env list entry's name: {"name": "HF_TOKEN", "value": …}."""
    name = next((v for k, v in obj.items() if isinstance(k, str) and k.lower() == "name"), None)
    return key_kind(name) if "value" in obj and isinstance(name, str) else None


def _str(s, n):
    if not has_candidate(s):
        return s
    s, k = _redact_text(s)
    n[0] += k
    return s


def redact(obj):
    """A copy of `obj` (JSON-like) with every secret replaced: the values under secret-looking
    keys, and the secrets inside every string (keys included)."""
    return _walk(obj, [0])


def count_redacted(obj):
    """How many values redact() replaces in obj."""
    n = [0]
    _walk(obj, n)
    return n[0]


# --- JSON text (args / extra / metadata columns, a trace file being copied) ---------------
_REDACTED_JSON = json.dumps(REDACTED)
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|\s+|[^"{}\[\]:,\s]+|.', re.DOTALL)


class JsonTextRedactor:
    """Redacts JSON text fed in pieces that each end between two tokens (a whole trace file cut
    after brackets, or one column value): every other byte is kept as it was. A secret key's
    object or list is replaced by one "<redacted>" even when it spans pieces. Strings are matched
    as they decode (`hf\\u005f…`, `"pass\\u0077ord"`, `postgres:\\/\\/…` are what they say).

    An env list entry, `{"name": "HF_TOKEN", "value": "…"}`, has its value redacted whichever of
    the two comes first: a string "value" seen before its object's name is held back until the
    object ends or its name is known (close() gives what is still held at the end). One held
    longer than HOLD tokens is redacted unseen: an env list entry is small, and the bound keeps
    a hostile file from making the redactor hold it whole."""

    HOLD = 1 << 16

    def __init__(self):
        self.skip = 0  # nesting depth inside a secret key's object or list being dropped
        self.pending = None  # the kind of the secret key whose value comes next
        self.count = 0
        self.held = []  # output tokens not given back yet: from the first unresolved "value" on
        self.given = 0  # tokens given back before held[0]
        # per open container: _Frame for an object, None for a list; frames[0] stands for the
        # containers opened before the last piece that was passed through unread
        self.frames: list[_Frame | None] = [_Frame()]
        self.key = None  # the object key whose value comes next, decoded

    def feed(self, text):
        if not (self.skip or self.held) and self.pending is None and 'alue"' not in text and _plain(text):
            self.frames, self.key = [_Frame()], None
            return text
        out = self.held
        toks = _JSON_TOKEN.findall(text)
        for i, t in enumerate(toks):
            c = t[0]
            if self.skip:  # inside a secret key's object or list: dropped
                self.skip += 1 if c in "{[" else -1 if c in "}]" else 0
            elif c.isspace() or c in ",:":
                out.append(t)
            elif self.pending is not None:  # the value of a secret key
                kind, self.pending, self.key = self.pending, None, None
                if c in "}]":  # a key without a value
                    self._close()
                    out.append(t)
                elif c in "{[":
                    self.skip = 1
                    out.append(_REDACTED_JSON)
                    self.count += 1
                elif _carries_nothing(_value(t), kind):
                    out.append(t)
                else:
                    out.append(_REDACTED_JSON)
                    self.count += 1
            elif c in "{[":
                self.key = None
                self.frames.append(_Frame() if c == "{" else None)
                out.append(t)
            elif c in "}]":
                self._close()
                out.append(t)
            elif c == '"' and _is_key(toks, i):
                s = _text(t)
                self.key = s
                if s is not None and has_candidate(s):
                    self.pending = key_kind(s)
                out.append(self._string(t, s))
            else:  # a value
                s = _text(t) if c == '"' else None
                key, self.key = self.key, None
                frame = self.frames[-1]
                if frame is None or key is None or not self._entry(frame, key.lower(), t, s, out):
                    out.append(t if c != '"' else self._string(t, s))
        return self._give()

    def _close(self):
        if len(self.frames) > 1:
            self.frames.pop()
        else:
            self.frames[0] = _Frame()
        self.key = None

    def _entry(self, frame, key, tok, s, out):
        """Whether the value `tok` (`s` decoded) of `key` in an object was taken as part of an env
        list entry: appended to out, redacted or held."""
        if key == "name":
            frame.kind = key_kind(s) if s is not None else None
            if frame.kind is not None and frame.value_at is not None:
                i = frame.value_at - self.given
                if not _carries_nothing(_value(out[i]), frame.kind):
                    out[i] = _REDACTED_JSON
                    self.count += 1
            frame.value_at = None
            frame.named = True
            return False
        if key != "value":
            return False
        if frame.kind is not None:
            redact = not _carries_nothing(_value(tok), frame.kind)
            out.append(_REDACTED_JSON if redact else tok)
            self.count += redact
            return True
        if frame.named or s is None:
            return False
        frame.value_at = self.given + len(out)
        out.append(self._string(tok, s))
        return True

    def _give(self):
        """The output up to the first string value still waiting for its object's name."""
        waiting = [f for f in self.frames if f is not None and f.value_at is not None]
        if waiting and len(self.held) > self.HOLD:
            for f in waiting:
                assert f.value_at is not None  # as `waiting` was chosen
                self.held[f.value_at - self.given] = _REDACTED_JSON
                self.count += 1
                f.value_at, f.named = None, True
            waiting = []
        # `waiting` holds the frames whose value_at is set
        n = (min(cast(int, f.value_at) for f in waiting) - self.given) if waiting else len(self.held)
        done, self.held = self.held[:n], self.held[n:]
        self.given += n
        return "".join(done)

    def close(self):
        """What is still held (a document that ended inside an object)."""
        done, self.held = self.held, []
        self.given += len(done)
        return "".join(done)

    def _string(self, tok, s):
        if s is None:  # not a valid JSON string: its raw text
            s, k = _redact_text(tok)
            self.count += k
            return s
        if not has_candidate(s):
            return tok
        s2, k = _redact_text(s)
        if not k:
            return tok
        self.count += k
        return json.dumps(s2, ensure_ascii=False)


class _Frame:
    """An open object: the kind of its "name" (once seen), where its string "value" went while
    its name is not known yet."""

    __slots__ = ("kind", "value_at", "named")

    def __init__(self) -> None:
        self.kind: str | None = None  # key_kind of its "name"
        self.value_at: int | None = None
        self.named = False


def _plain(text):
    """Whether a piece of JSON text surely holds no secret: no candidate in its raw text, nor
    once its escapes are read (`\\u005f` is `_`; `\\t` before a key word is a separator)."""
    if has_candidate(text):
        return False
    if "\\" not in text:
        return True
    if "\\u" in text:
        return False  # any letter may hide behind one: the tokens are decoded
    return not has_candidate(_ESCAPES.sub(lambda m: "/" if m.group() == "\\/" else " ", text))


_ESCAPES = re.compile(r"\\.")


def _is_key(toks, i):
    j = i + 1
    if j < len(toks) and toks[j][0].isspace():
        j += 1
    return j < len(toks) and toks[j] == ":"


def _text(tok):
    """A string token's text (None where it is not a valid JSON string): decoded only where it
    holds an escape."""
    return _decode(tok) if "\\" in tok else tok[1:-1]


def _decode(tok):
    try:
        s = json.loads(tok)
    except ValueError:
        return None
    return s if isinstance(s, str) else None


def _value(tok):
    """A JSON scalar token's value as _carries_nothing reads it (numbers as Decimal; text that
    is no JSON value as it is)."""
    if tok[0] == '"':
        s = _decode(tok)
        return tok if s is None else s
    t = tok.strip()
    if t in ("true", "false"):
        return t == "true"
    if t == "null":
        return None
    try:
        return Decimal(t)
    except ArithmeticError:
        return t


def redact_string(s):
    """One string value of a table: redacted as JSON text when it is a JSON object or list, else
    as plain text. Unchanged strings come back as they were (the same object)."""
    if not isinstance(s, str) or not has_candidate(s):
        return s
    head = s.lstrip()[:1]
    if head in ("{", "["):
        try:
            json.loads(s)
        except ValueError:
            pass
        else:
            r = JsonTextRedactor()
            out = r.feed(s)
            return out if r.count else s
    return redact_text(s)


# --- Arrow tables ------------------------------------------------------------------------
def _is_text(t):
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _is_list(t):
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t)


def text_column(t):
    """Whether a column of Arrow type `t` can hold secrets (strings, lists of strings)."""
    return _is_text(t) or ((_is_list(t) or pa.types.is_dictionary(t)) and _is_text(t.value_type))


def _values(col):
    """The plain string values of a text column (lists flattened, dictionaries and views decoded)."""
    t = col.type
    values = col
    if pa.types.is_dictionary(t) or pa.types.is_string_view(t) or pa.types.is_list_view(t):
        values = col.cast(pa.list_(t.value_type) if _is_list(t) else t.value_type)
    return pc.list_flatten(values) if _is_list(t) else values


def _changes(columns):
    """{value: redacted value} for every distinct value of these text columns that redaction
    changes. PREFILTER runs once, over the distinct values of all of them together: hashing is
    far cheaper than the expression on every row, and compiling the expression (its hundred
    formats) is paid once per table, not once per column."""
    distinct = [pc.unique(_values(c)).cast(pa.large_string()) for c in columns if len(c) > c.null_count]
    if not distinct:
        return {}
    values = pc.unique(pa.concat_arrays(distinct)) if len(distinct) > 1 else distinct[0]
    hit = pc.match_substring_regex(values, PREFILTER)
    if not pc.any(hit).as_py():
        return {}
    changed = {}
    for v in values.filter(pc.fill_null(hit, False)).to_pylist():
        r = redact_string(v)
        if r is not v:
            changed[v] = r
    return changed


def _apply(col, changed):
    """The column with the values in `changed` replaced; the same object when none is in it."""
    t = col.type
    values = _values(col)
    old = pa.array(list(changed), values.type)
    if not pc.any(pc.is_in(values, value_set=old)).as_py():
        return col
    if _is_list(t):  # rare: rebuilt from Python values
        rows = col.to_pylist()
        return pa.array([None if r is None else [changed.get(x, x) for x in r] for r in rows], t)
    if values is not col:
        return _apply(values, changed).cast(t)
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    out = []
    for c in chunks:
        mask = pc.is_in(c, value_set=old)
        if pc.any(mask).as_py():
            c = pc.replace_with_mask(c, mask, pa.array([changed[v] for v in c.filter(mask).to_pylist()], t))
        out.append(c)
    return pa.chunked_array(out, t) if isinstance(col, pa.ChunkedArray) else out[0]


def redact_column(col):
    """An Arrow array or chunked array of strings (or of lists of strings, or dictionary-encoded)
    with every value redacted (redact_string); the same object when nothing changed. Only the
    rows holding a distinct value that changed are rewritten."""
    changed = _changes([col])
    return _apply(col, changed) if changed else col


def redact_table(table):
    """The Arrow table with every string column redacted (redact_column); columns without a
    secret are the same arrays as before."""
    text = [i for i, f in enumerate(table.schema) if text_column(f.type)]
    changed = _changes([table.column(i) for i in text])
    if not changed:
        return table
    for i in text:
        col = table.column(i)
        new = _apply(col, changed)
        if new is not col:
            table = table.set_column(i, table.schema.field(i), new)
    return table


def _sql_texts(schema, joiner):
    """A DuckDB expression per string column of this Arrow schema (a list's elements joined by `joiner`)."""
    for f in schema:
        if text_column(f.type):
            col = '"' + f.name.replace('"', '""') + '"'
            yield f"array_to_string({col}, {joiner})" if _is_list(f.type) else col


def sql_candidates(schema):
    """A DuckDB condition true for every row of a table of this Arrow schema that redact_table
    could change (PREFILTER over its string columns; a list's elements joined by newlines)."""
    pat = "'" + PREFILTER.replace("'", "''") + "'"
    terms = [f"coalesce(regexp_matches({e}, {pat}), false)" for e in _sql_texts(schema, "chr(10)")]
    return " OR ".join(terms) if terms else "false"


def sql_redacted_count(schema):
    """A DuckDB expression, over a row of a table of this Arrow schema, counting the REDACTED
    marks in its strings (what `tracecols info` reports)."""
    terms = [f"coalesce(length({e}) - length(replace({e}, '{REDACTED}', '')), 0)" for e in _sql_texts(schema, "' '")]
    return f"({' + '.join(terms)}) // {len(REDACTED)}" if terms else "0"
