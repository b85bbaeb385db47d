"""jsontext.dumps (msgspec) writes exactly the text of the json-module encoder it replaced."""

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracecols.read import jsontext

_decimals = st.decimals(allow_nan=False, allow_infinity=False)
_scalars = st.none() | st.booleans() | st.integers(-(1 << 80), 1 << 80) | _decimals | st.text()
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20
)


def _reference(obj):
    """The json module, with every Decimal written as its str(): the encoder before msgspec."""
    if isinstance(obj, Decimal):
        return str(obj)
    if isinstance(obj, dict):
        return "{" + ",".join(jsontext._dumps(str(k)) + ":" + _reference(v) for k, v in obj.items()) + "}"
    if isinstance(obj, list):
        return "[" + ",".join(_reference(v) for v in obj) + "]"
    return jsontext._dumps(obj)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _values, max_size=6))
def test_same_text_as_the_json_module(obj):
    assert jsontext.dumps(obj) == _reference(obj)
    assert jsontext.loads(jsontext.dumps(obj)) == obj


def test_what_msgspec_declines_still_has_its_text():
    # a lone surrogate cannot be written as UTF-8: the text escapes it (and every non-ASCII
    # character) and reads back the same
    lone = {"s": "a\ud800bé", "d": Decimal("1.50")}
    text = jsontext.dumps(lone)
    assert text == '{"s":"a\\ud800b\\u00e9","d":1.50}'
    assert jsontext.loads(text) == lone and text.encode("utf-8")


def test_exact_numbers_write_as_written_and_refuse_int():
    v = jsontext.Exact("1.50")
    assert jsontext.dumps({"a": v, "b": [jsontext.Exact("1E+5")]}) == '{"a":1.50,"b":[1E+5]}'
    assert v == Decimal("1.5") and isinstance(v, Decimal)
    with pytest.raises(TypeError):
        int(v)
