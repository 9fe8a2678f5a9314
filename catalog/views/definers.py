"""Who a definer view lends reads of, and the rule that keeps it honest: a
definer view may only reach what its definer may read.

The definer (``sapwood.definer``, catalog.views.security) must
hold read, on the view's reference, on everything the view reads: the
objects its SQL names and, through the views among them, what those read in
turn (their recorded analyses), names that resolve to nothing included (so
that a refusal does not tell a name that exists from one that does not).
It is checked when a principal becomes the definer (``vouch``) and again
each time the view lends (``lends``, with the grants of that moment): a
definer who lost a grant lends it no more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from catalog.kernel import Catalog, Who
from catalog.targets import dotted
from catalog.views.security import DEFINED_BY, DEFINER, SECURITY, definer_of
from core.commits import Put
from core.content import IcebergView, MaterializedView
from core.errors import ForbiddenError, InvalidKeyError, SapwoodError
from core.keys import ContentKey
from core.refs import RefSpec
from core.sql.stored import DialectAnalysis
from core.sql.validity import HIDDEN_REASON

Key = tuple[str, ...]
# May the principal (by name) read the key, with its grants now?
Grants = Callable[[str, Key], bool]


def writer(who: Who) -> str | None:
    """The principal a write records as definer (None: authentication off)."""
    return who.principal if who.reads is not None else None


def _named(analyses: Iterable[DialectAnalysis] | None) -> set[Key]:
    out: set[Key] = set()
    for a in analyses or ():
        out.update(tuple(d.key) for d in a.dependencies)
        out.update(tuple(n.split(".")) for n in a.unresolved)
    return out


def reads_of(catalog: Catalog, ref: RefSpec | str,
             analyses: Iterable[DialectAnalysis] | None) -> set[Key]:
    """Every key a view with ``analyses`` reads on ``ref``, through the views
    and materialized views it reads, at one commit (one lookup per level)."""
    seen: set[Key] = set()
    frontier = _named(analyses)
    at: RefSpec | str = ref
    while frontier:
        seen |= frontier
        resolved, found = catalog.store.lookup(at, _keys(frontier))
        at = f"@{resolved.hash}"
        frontier = set()
        for c in found.values():
            if isinstance(c, IcebergView | MaterializedView):
                frontier |= _named(c.analysis) - seen
    return seen


def _keys(names: set[Key]) -> list[ContentKey]:
    """The names that can be keys (an unresolved name may not be one: it is
    checked against the grants all the same, and holds nothing to read)."""
    out = []
    for k in sorted(names):
        try:
            out.append(ContentKey(k))
        except InvalidKeyError:
            continue
    return out


def vouch(catalog: Catalog, ref: RefSpec, key: ContentKey,
          analyses: Iterable[DialectAnalysis] | None, who: Who) -> None:
    """403 unless ``who``, becoming the definer of view ``key``, may read
    everything it reads. The refusal names no object: the one that fails is
    one the caller may not read."""
    reads = who.reads
    if reads is None:
        return
    if not all(reads(ref, k) for k in sorted(reads_of(catalog, ref, analyses))):
        raise ForbiddenError(
            f"Principal '{who.principal}' lacks the 'read' privilege on reference '{ref}' on "
            f"something view {dotted(key)} reads ({HIDDEN_REASON}): a definer view "
            f"({SECURITY}={DEFINER}) may only read what its definer may read")


def adopted(catalog: Catalog, ref: RefSpec, key: ContentKey, properties: Mapping[str, str],
            analyses: Iterable[DialectAnalysis] | None, who: Who) -> None:
    """A definer view whose metadata file the client wrote (register, a
    versioning-API put): the definer it names must be the writer, who then
    vouches for it; one that names none lends nothing."""
    claim = definer_of(properties)
    if claim is None:
        return
    if claim != who.principal:
        raise ForbiddenError(
            f"View {dotted(key)} names '{claim[:200]}' as its definer ({DEFINED_BY}): a "
            f"definer view is written by its definer ('{who.principal}' may put one that "
            "names itself, or none)")
    vouch(catalog, ref, key, analyses, who)


def put_by(catalog: Catalog, ref: RefSpec, op: Put, who: Who) -> None:
    """A versioning-API put of a view at a metadata file the client names:
    as ``adopted``, unless the file is the one the key holds (the store
    checks the expected content) or one the server does not read (then it
    is not analysed, and reads nothing through ``referenced-by``)."""
    c = op.content
    if not isinstance(c, IcebergView | MaterializedView) or \
            c.metadata_location == getattr(op.expected, "metadata_location", None):
        return
    try:
        catalog.locations.check(c.metadata_location)
        properties = catalog.files.view_of(c).properties
    except SapwoodError:
        return
    adopted(catalog, ref, op.key, properties, c.analysis, who)


def lends(catalog: Catalog, ref: RefSpec, view: IcebergView | MaterializedView,
          properties: Mapping[str, str], may_read: Grants) -> bool:
    """Whether a definer view (at ``ref``) lends its reads now: it has a
    recorded definer who, with the grants of this moment, may read
    everything the view reads."""
    definer = definer_of(properties)
    if definer is None:
        return False
    return all(may_read(definer, k) for k in reads_of(catalog, ref, view.analysis))
