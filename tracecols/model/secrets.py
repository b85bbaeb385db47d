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

By key. A key — of a JSON object, or a `KEY=value`, `KEY = value`, `KEY: value`, `--flag value`
or `--flag=value` inside a string (not `pkg==1.0`, a version pin) — looks like a secret when,
case-insensitively, it contains `secret`, `passw`, `credential`, `creds`, `cookie`, `auth`
(`authorization` too, not `author`/`authority`), `api_key`, `private_key`, `access_key` or
`session_key` (with `_`, `-`, `.` or nothing between the words), or `token` starting a word
(`HF_TOKEN`, `accessToken`; not `tiktoken`) and not followed by `s` or `i`, or ends in the word
`key` or `pat` (`AWS_ACCESS_KEY`, `encryption-key`, `GITHUB_PAT`). So `HF_TOKEN`, `--hf-token`,
`--api-key`, `--password=…` are secrets, while `num_tokens`, vLLM's `--max-num-batched-tokens
8192`, `--tokenizer`, `TOKENIZERS_PARALLELISM`, `--ssl-keyfile`, `keyboard` and `monkey` are
not. Its value is replaced by `<redacted>` and the key kept, so a reader sees that a secret was
there (`--hf-token <redacted>`, `"HF_TOKEN": "<redacted>"`); an object or list under a secret key
goes as one. A value that carries nothing is kept: null, true/false (also as text), an empty
string, and, under a key whose only hint is `token`, a number (`token_count=5`,
`"max_token": 4096` are counts, not tokens). Inside a string the value is the quoted text after
the key, or the next word; a `--flag` followed by another `--flag` has none.

By value. Well-known credential formats are replaced anywhere in a string, whatever key they sit
under (FORMATS): Hugging Face `hf_…`, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_…` and
`github_pat_…`, AWS access key ids `AKIA…`/`ASIA…`, Google API keys `AIza…`, Slack `xox[baprs]-…`,
OpenAI/Anthropic-style `sk-…`/`sk-ant-…`, Stripe `sk_live_…`/`rk_live_…`, `Bearer <token>`,
PEM private key blocks (the BEGIN/END lines stay), JWTs `eyJ….eyJ….…` and the password of a
`scheme://user:password@host` URL. Each format asks for the real length and alphabet, so near
misses stay: `hf_` inside a word or followed by a lowercase identifier, `sk-` inside `task-…`
or without a digit, an `AKIA` that is not 20 upper-case characters.

Speed. Redaction runs on every ingest, so each string column is first searched with one RE2
expression (PREFILTER, through pyarrow.compute in C++; the same expression serves DuckDB when a
store is redacted on its way out) that every secret above must match — over the column's
distinct values, which hashing finds faster than the expression runs over every row — and only
the few values it finds go through the exact rules in Python. On df_index_resolver.json.gz
(216k events) building `events` takes 24 ms instead of 15 ms, of a 0.9 s read; `tracecols.open`
stays at 1.1-1.2 s. A maintained scanner was measured on the same trace: detect-secrets 1.5 (pure
Python, line by line) takes about 220 µs per string, some 50 s for the trace's 216k name/args
strings, and its entropy plugins flag ordinary args such as `{"memory bandwidth (GB/s)":1}` —
too slow and too noisy for ingest, hence this compact pattern set.
"""

import json
import re
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc

REDACTED = "<redacted>"
METADATA_TABLES = ("traces", "devices")  # small: a reader redacts them whole, whatever the store says

# --- the key rule ------------------------------------------------------------------------
_SECRET_NAME = re.compile(
    r"secret|passw|credential|creds(?![a-z])|cookie|auth(?!or(?!iz))"
    r"|(?:api|private|access|session)[_.-]?key|(?:^|[_.-])(?:key|pat)$",
    re.IGNORECASE | re.ASCII,
)
# `token` starting a word (HF_TOKEN, --auth-token, accessToken), not inside one (tiktoken)
_TOKEN_NAME = re.compile(r"(?i:(?<![a-z])token(?![si]))|(?<=[a-z])Token(?![sSiI])", re.ASCII)
_NOTHING = frozenset({"", "true", "false", "none", "null", REDACTED})
_COUNT = re.compile(r"[+-]?\d+(?:\.\d+)?")


def key_kind(key):
    """ "secret" for a key that names a secret, "token" for one whose only hint is `token`, else None."""
    if not isinstance(key, str):
        return None
    k = key.lstrip("-")
    if _SECRET_NAME.search(k):
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
# Each format: the whole match is the secret, except the groups `pre` and `post`, which stay.
_A = re.ASCII
FORMATS = [
    (
        "PEM private key",
        re.compile(
            r"(?P<pre>-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----).*?"
            r"(?:(?P<post>-----END [A-Z0-9 ]*PRIVATE KEY-----)|\Z)",
            _A | re.DOTALL,
        ),
    ),
    ("JWT", re.compile(r"\beyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]*", _A)),
    ("Hugging Face", re.compile(r"\bhf_(?![a-z]+\b)[A-Za-z0-9]{30,}\b", _A)),
    ("GitHub", re.compile(r"\b(?:gh[pousr]_(?![a-z]+\b)[A-Za-z0-9]{30,}|github_pat_\w{22,})\b", _A)),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", _A)),
    ("Google API key", re.compile(r"\bAIza[\w-]{35}(?![\w-])", _A)),
    ("Slack", re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}", _A)),
    ("OpenAI / Anthropic", re.compile(r"\bsk-(?=[\w-]*\d)[\w-]{20,}", _A)),
    ("Stripe", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", _A)),
    ("bearer token", re.compile(r"(?P<pre>\b(?i:bearer)[ \t]+)[\w.~+/-]{16,}=*", _A)),
    ("URL password", re.compile(r"(?P<pre>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+(?P<post>@)", _A)),
]
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
    r"""|(?P<bare>[^\s"'&;,<>(){}\[\]]+))""",
    _A,
)

# One RE2 expression (also valid for Python's re) that every string holding a secret matches:
# a superset of FORMATS and of the key rule, for a whole column at C++ speed (pyarrow, DuckDB).
PREFILTER = (
    r"(?i:-----BEGIN|eyJ[\w-]{10}|hf_[a-z0-9]{30}|gh[pousr]_[a-z0-9]{30}|github_pat_|xox[baprs]-"
    r"|sk-[\w-]{20}|[rs]k_(?:live|test)_|bearer\s|://[^/\s:@]+:[^/\s@]+@"
    r"|token(?:[^si]|$)|secret|passw|cred|cookie|auth|(?:api|private|access|session)[_.-]?key"
    r"|key\b|pat\b)|AKIA|ASIA|AIza"
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


def _redact_text(s):
    """(s with every secret replaced, how many) — the value rule, then the key rule inside the string."""
    n = 0
    for _, rx in FORMATS:
        s, k = rx.subn(_keep_ends, s)
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
        for k, v in obj.items():
            kind = key_kind(k)
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
    object or list is replaced by one "<redacted>" even when it spans pieces."""

    def __init__(self):
        self.skip = 0  # nesting depth inside a secret key's object or list being dropped
        self.pending = None  # the kind of the secret key whose value comes next
        self.count = 0

    def feed(self, text):
        if not self.skip and self.pending is None and not has_candidate(text):
            return text
        toks = _JSON_TOKEN.findall(text)
        out = []
        for i, t in enumerate(toks):
            c = t[0]
            if self.skip:  # inside a secret key's object or list: dropped
                self.skip += 1 if c in "{[" else -1 if c in "}]" else 0
            elif self.pending is not None:  # the value of a secret key
                if c.isspace() or c == ":":
                    out.append(t)
                    continue
                kind, self.pending = self.pending, None
                if c in ",}]":  # a key without a value
                    out.append(t)
                    continue
                if c in "{[":
                    self.skip = 1
                elif _carries_nothing(_value(t), kind):
                    out.append(t)
                    continue
                out.append(_REDACTED_JSON)
                self.count += 1
            elif c == '"' and len(t) > 1 and _PREFILTER.search(t):
                if _is_key(toks, i):
                    self.pending = key_kind(_decode(t))
                out.append(self._string(t))
            else:
                out.append(t)
        return "".join(out)

    def _string(self, tok):
        s = _decode(tok)
        if s is None:  # not a valid JSON string: its raw text
            s, k = _redact_text(tok)
            self.count += k
            return s
        s2, k = _redact_text(s)
        if not k:
            return tok
        self.count += k
        return json.dumps(s2, ensure_ascii=False)


def _is_key(toks, i):
    j = i + 1
    if j < len(toks) and toks[j][0].isspace():
        j += 1
    return j < len(toks) and toks[j] == ":"


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


def redact_column(col):
    """An Arrow array or chunked array of strings (or of lists of strings, or dictionary-encoded)
    with every value redacted (redact_string); the same object when nothing changed.

    PREFILTER runs once over the column's distinct values (hashing them is far cheaper than
    running the expression on every row, and keeps one expression for the whole column), and
    only the rows holding a distinct value that changed are rewritten."""
    t = col.type
    if len(col) == col.null_count:
        return col
    values = col
    if pa.types.is_dictionary(t) or pa.types.is_string_view(t) or pa.types.is_list_view(t):
        values = col.cast(pa.list_(t.value_type) if _is_list(t) else t.value_type)
    if _is_list(t):
        values = pc.list_flatten(values)
    distinct = pc.unique(values)
    hit = pc.match_substring_regex(distinct, PREFILTER)
    if not pc.any(hit).as_py():
        return col
    changed = {}
    for v in distinct.filter(pc.fill_null(hit, False)).to_pylist():
        r = redact_string(v)
        if r is not v:
            changed[v] = r
    if not changed:
        return col
    if _is_list(t):  # rare: rebuilt from Python values
        rows = col.to_pylist()
        return pa.array([None if r is None else [changed.get(x, x) for x in r] for r in rows], t)
    if values is not col:
        return redact_column(values).cast(t)
    old = pa.array(list(changed), t)
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    out = []
    for c in chunks:
        mask = pc.is_in(c, value_set=old)
        if pc.any(mask).as_py():
            c = pc.replace_with_mask(c, mask, pa.array([changed[v] for v in c.filter(mask).to_pylist()], t))
        out.append(c)
    return pa.chunked_array(out, t) if isinstance(col, pa.ChunkedArray) else out[0]


def redact_table(table):
    """The Arrow table with every string column redacted (redact_column); columns without a
    secret are the same arrays as before."""
    for i, f in enumerate(table.schema):
        if text_column(f.type):
            col = table.column(i)
            new = redact_column(col)
            if new is not col:
                table = table.set_column(i, f, new)
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
