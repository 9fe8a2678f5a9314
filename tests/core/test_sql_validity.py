"""Why a view stops holding against its bases: each change in words."""

from __future__ import annotations

from core.sql.analysis import TABLE, Relation, analyze
from core.sql.stored import stored
from core.sql.validity import reasons

ORDERS = Relation(("sales", "orders"), "id-1", TABLE,
                  (("id", "long"), ("amount", "long"), ("note", "string")))


def analysed(sql: str):  # type: ignore[no-untyped-def]
    return stored(analyze(sql, "spark", ("sales",),
                          lambda keys: {k: ORDERS for k in keys if k == ORDERS.key}))


def test_the_columns_used_anywhere_are_recorded_with_their_types() -> None:
    a = analysed("SELECT id FROM orders WHERE amount > 0")
    (dep,) = a.dependencies
    assert dep.columns == {"id": "long", "amount": "long"}


def test_a_view_that_still_holds_has_no_reasons() -> None:
    a = analysed("SELECT id, amount FROM orders")
    bigger = Relation(ORDERS.key, "id-1", TABLE, (*ORDERS.columns, ("extra", "int")))
    assert reasons(a, {ORDERS.key: bigger}.get) == []


def test_each_change_is_named() -> None:
    a = analysed("SELECT id, amount FROM orders")
    assert reasons(a, {}.get) == ["table sales.orders dropped"]
    again = Relation(ORDERS.key, "id-2", TABLE, ORDERS.columns)
    assert reasons(a, {ORDERS.key: again}.get) == [
        "table sales.orders was dropped and created again (another object now)"]
    no_amount = Relation(ORDERS.key, "id-1", TABLE, (("id", "long"),))
    assert reasons(a, {ORDERS.key: no_amount}.get) == [
        "column amount no longer exists in sales.orders"]
    retyped = Relation(ORDERS.key, "id-1", TABLE, (("id", "long"), ("amount", "string")))
    assert reasons(a, {ORDERS.key: retyped}.get) == [
        "type of sales.orders.amount changed long → string"]
    # A column the view does not use may go.
    no_note = Relation(ORDERS.key, "id-1", TABLE, (("id", "long"), ("amount", "long")))
    assert reasons(a, {ORDERS.key: no_note}.get) == []
