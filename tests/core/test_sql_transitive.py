"""A view holds only if everything it reads holds, at any depth
(core.sql.transitive, issue 44 defect 1): the way in each reason, one way
to each cause however many there are, a cycle as its own reason, the depth
limit, and a view judged the same whichever view asks first."""

from __future__ import annotations

from core.sql.model import Key
from core.sql.stored import DialectAnalysis
from core.sql.transitive import transitive
from core.sql.validity import Cause, ViewStatus

A = DialectAnalysis(dialect="spark", status="ok")


def k(name: str) -> Key:
    return ("s", name)


def ok() -> ViewStatus:
    return ViewStatus("ok", (), A)


def dropped(table: str) -> ViewStatus:
    c = Cause(f"table s.{table} dropped", k(table))
    return ViewStatus("invalid", (c.text,), A, (c,))


def test_the_way_to_a_cause_is_named_at_every_depth() -> None:
    direct = {k("big"): dropped("revenue"), k("top"): ok(), k("x"): ok()}
    reads = {k("big"): [], k("top"): [k("big")], k("x"): [k("top")]}
    got = transitive(direct, reads, [k("x")], 32)
    assert got[k("big")].reasons == ("table s.revenue dropped",)
    assert got[k("top")].reasons == ("s.top → s.big → s.revenue: table s.revenue dropped",)
    assert got[k("x")].reasons == (
        "s.x → s.top → s.big → s.revenue: table s.revenue dropped",)
    assert {s.status for s in got.values()} == {"invalid"}
    # Asked from the middle, the same answers.
    again = transitive(direct, reads, [k("top"), k("big")], 32)
    assert again[k("top")] == got[k("top")] and k("x") not in again


def test_one_way_to_each_cause_through_a_diamond_of_diamonds() -> None:
    """Twenty layers of two views each reading both below: 2**20 ways to
    the dropped table, one reason per view."""
    direct = {k("base"): dropped("t")}
    reads: dict[Key, list[Key]] = {k("base"): []}
    below = [k("base")]
    for layer in range(20):
        now = [k(f"l{layer}a"), k(f"l{layer}b")]
        for v in now:
            direct[v], reads[v] = ok(), list(below)
        below = now
    got = transitive(direct, reads, below, 32)
    (reason,) = got[below[0]].reasons
    assert reason.startswith("s.l19a → s.l18a → ") and reason.endswith(
        "s.l0a → s.base → s.t: table s.t dropped")


def test_a_cycle_is_its_own_reason_and_readers_of_it_say_the_way() -> None:
    direct = {k("a"): ok(), k("b"): ok(), k("c"): ok(), k("self"): ok()}
    reads = {k("a"): [k("b")], k("b"): [k("a")], k("c"): [k("a")], k("self"): [k("self")]}
    got = transitive(direct, reads, [k("c"), k("self")], 32)
    assert got[k("a")].reasons == ("s.a → s.b → s.a: reads itself",)
    assert got[k("b")].reasons == ("s.b → s.a → s.b: reads itself",)
    assert got[k("c")].reasons == ("s.c → s.a → s.b → s.a: reads itself",)
    assert got[k("self")].reasons == ("s.self → s.self: reads itself",)
    # The same, whichever is asked first.
    assert transitive(direct, reads, [k("b")], 32)[k("b")] == got[k("b")]


def test_views_nested_past_the_limit_are_said_to_be() -> None:
    direct = {k(f"v{i}"): ok() for i in range(6)}
    reads = {k(f"v{i}"): [k(f"v{i + 1}")] for i in range(5)}
    reads[k("v5")] = []
    assert transitive(direct, reads, [k("v0")], 5)[k("v0")].status == "ok"
    got = transitive(direct, reads, [k("v0")], 4)
    assert got[k("v0")].reasons == (
        "reads views nested more than 4 levels deep, the most the catalog follows",)
    assert got[k("v1")].status == "ok"
    # A view not looked at (past the limit the caller followed) counts as deeper.
    del direct[k("v5")]
    assert transitive(direct, reads, [k("v1")], 4)[k("v1")].status == "invalid"


def test_an_unanalysed_view_stays_so_and_a_reader_of_an_ok_view_is_ok() -> None:
    never = ViewStatus("unanalysed", ("written before analysis existed",), None)
    direct = {k("u"): never, k("top"): ok(), k("mid"): ok()}
    reads = {k("u"): [], k("top"): [k("mid"), k("u")], k("mid"): []}
    got = transitive(direct, reads, [k("top"), k("u")], 32)
    assert got[k("u")] == never and got[k("top")] == ok()
