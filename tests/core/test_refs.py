from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InvalidHashError, InvalidInstantError, InvalidRefError
from core.refs import Ancestor, AtInstant, Parent, RefSpec, format_ref, parse_ref

names = st.from_regex(r"[A-Za-z]([A-Za-z0-9_-]{0,6}(/[A-Za-z0-9_-]{1,4})?)?", fullmatch=True)
hashes = st.text("0123456789abcdef", min_size=8, max_size=64)
instants = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1),
                        timezones=st.just(UTC))
parts = st.lists(st.one_of(
    st.integers(0, 10_000).map(Ancestor),
    st.integers(1, 9).map(Parent),
    instants.map(AtInstant)), max_size=4).map(tuple)
specs = st.one_of(
    st.builds(RefSpec, names, st.none() | hashes, parts),
    st.builds(RefSpec, st.none(), hashes, parts),
)


@given(specs)
def test_format_then_parse_round_trips(spec):
    assert parse_ref(format_ref(spec)) == spec


def test_forms():
    h = "0123abcd" * 8
    assert parse_ref("main") == RefSpec("main")
    assert parse_ref(f"main@{h}") == RefSpec("main", h)
    assert parse_ref(f"@{h[:8]}") == RefSpec(None, h[:8])
    assert parse_ref("main~3^2").parts == (Ancestor(3), Parent(2))
    assert parse_ref("main~") == parse_ref("main~1")
    t = parse_ref("main*2026-11-21T09:00:00Z")
    assert t.reflog_instant == datetime(2026, 11, 21, 9, tzinfo=UTC)
    assert parse_ref("main*1795251600000").reflog_instant == t.reflog_instant
    assert parse_ref("main*2026-11-21T10:00:00+01:00").reflog_instant == t.reflog_instant
    assert parse_ref(f"main@{h}*2026-11-21T09:00:00Z").reflog_instant is None
    assert parse_ref("MAIN@ABCDEF12").hash == "abcdef12"
    assert parse_ref("feature/x.y-1").name == "feature/x.y-1"


@pytest.mark.parametrize(("text", "error", "message"), [
    ("", InvalidRefError, "reference is empty"),
    ("1main", InvalidRefError, "invalid reference name '1main'"),
    ("ma in", InvalidRefError, "invalid reference name 'ma in'"),
    ("a..b", InvalidRefError, "no '..'"),
    ("main/", InvalidRefError, "invalid reference name 'main/'"),
    ("main@", InvalidHashError, "missing commit hash after '@'"),
    ("main@zz12345678", InvalidHashError, "only hex digits"),
    ("main@abc", InvalidHashError, "8 to 64 hex characters, got 3"),
    ("@" + "a" * 65, InvalidHashError, "got 65"),
    ("main~x", InvalidRefError, "invalid ancestor count 'x'"),
    ("main^0", InvalidRefError, "parent number must be 1 or more"),
    ("main^z", InvalidRefError, "invalid parent number 'z'"),
    ("main*", InvalidInstantError, "missing instant after '*'"),
    ("main*yesterday", InvalidInstantError, "invalid instant 'yesterday'"),
    ("main*2026-11-21T09:00:00", InvalidInstantError, "has no time zone"),
])
def test_malformed_refs_are_named(text, error, message):
    with pytest.raises(error, match=message):
        parse_ref(text)


def test_lower_case_rfc3339_instants_parse() -> None:
    from core.instants import parse_instant

    assert parse_instant("2026-11-21t09:00:00z") == parse_instant("2026-11-21T09:00:00Z")


def test_one_rule_decides_what_a_write_may_address() -> None:
    from core.errors import ReadOnlyReferenceError
    from core.refs import branch_to_write

    assert branch_to_write(parse_ref("etl")) == "etl"
    for spec in ("main~1", "main*2026-11-21T09:00:00Z", "@" + "a" * 64):
        with pytest.raises(ReadOnlyReferenceError, match="read-only"):
            branch_to_write(parse_ref(spec))
    with pytest.raises(ReadOnlyReferenceError, match="it is a tag"):
        branch_to_write(parse_ref("v1"), is_tag=True)
