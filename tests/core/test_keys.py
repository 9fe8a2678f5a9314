import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from core.errors import InvalidKeyError
from core.keys import ContentKey

element = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x2FF), min_size=1,
                  max_size=12).filter(lambda e: e != ".")
keys = st.lists(element, min_size=1, max_size=6)


@given(keys)
def test_path_string_round_trips(elements):
    key = ContentKey(elements)
    assert ContentKey.parse(key.to_path_string()) == key


@given(keys)
def test_path_string_has_no_characters_that_break_uris(elements):
    path = ContentKey(elements).to_path_string()
    assert "/" not in path and "\\" not in path and "%" not in path


@given(keys, keys)
def test_order_is_element_wise(a, b):
    assert (ContentKey(a) < ContentKey(b)) == (tuple(a) < tuple(b))


@pytest.mark.parametrize(("elements", "path"), [
    (["foo", "bar", "baz"], "foo.bar.baz"),
    (["foo", ".bar", "baz"], "foo..._bar..baz"),
    (["foo.", ".bar", "a/\\%aa"], ".foo._..._bar..a.{.}.[aa"),
])
def test_nessie_examples(elements, path):
    assert ContentKey(elements).to_path_string() == path
    assert ContentKey.parse(path).elements == tuple(elements)


def test_legacy_dot_characters_are_read():
    assert ContentKey.parse("a.b\x1dc").elements == ("a", "b.c")
    assert ContentKey.parse("a.b\x1fc").elements == ("a", "b.c")


@pytest.mark.parametrize(("bad", "message"), [
    ([], "at least one element"),
    (["a", ""], "empty element"),
    (["a", "."], "'.' element"),
    (["a\x01b"], "control character 0x01"),
    (["x"] * 21, "21 elements"),
    (["x" * 501], "at most 500"),
])
def test_malformed_keys_are_named(bad, message):
    with pytest.raises(InvalidKeyError, match=message):
        ContentKey(bad)


@pytest.mark.parametrize(("path", "message"), [
    ("", "empty"),
    ("a.", "ends with an empty element"),
    ("a..b.x", "invalid escape '.x'"),
    (".a....b", "empty element"),
])
def test_malformed_paths_are_named(path, message):
    with pytest.raises(InvalidKeyError, match=message):
        ContentKey.parse(path)


def test_pydantic_uses_nessie_json():
    class M(BaseModel):
        key: ContentKey

    m = M.model_validate({"key": {"elements": ["a", "b"]}})
    assert m.key == ContentKey.of("a", "b")
    assert m.model_dump() == {"key": {"elements": ["a", "b"]}}
    assert M.model_validate({"key": "a.b"}).key == m.key


def test_namespace_helpers():
    k = ContentKey.of("a", "b", "c")
    assert str(k.namespace) == "a.b" and k.name == "c"
    assert [str(a) for a in k.ancestors()] == ["a", "a.b"]
    assert k.is_below(ContentKey.of("a")) and not k.is_below(ContentKey.of("a", "bc"))
