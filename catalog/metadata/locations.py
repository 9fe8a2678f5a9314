"""Where tables' and views' files go, and the one check that every location
the server writes to or reads from passes.

Two rules keep every file inside the warehouse (unless the server allows
external locations):

* A default location is built from an encoding of each name element that
  holds only ``[A-Za-z0-9_-]`` and ``~``: no ``.``, ``/``, ``\\`` or ``%``
  survives, so no name, however it is decoded later, can climb out.
  (Percent-encoding would not do: a consumer that decodes the URI turns
  ``%2E%2E%2F`` back into ``../``.)
* A location is judged after normalisation (``posixpath.normpath`` of its
  path), and judged again as a consumer that percent-decodes it or reads
  ``\\`` as a separator would see it: all readings must be inside.
* In a file warehouse, a location is judged once more as its real path
  (``os.path.realpath``: symbolic links followed) against the warehouse's
  real path: a link planted inside the warehouse that leads out cannot take
  a location, a metadata file or a read through it (and catalog.metadata.local_files
  writes without following links, so one swapped in after this check
  cannot either).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import string
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from catalog.limits import MAX_PATH_CHARS, MAX_PATH_DEPTH
from core.errors import SapwoodError, bad_request

# Where a table's or view's metadata files go, when not in <location>/metadata.
METADATA_PATH = "write.metadata.path"
_SAFE = frozenset(string.ascii_letters + string.digits + "_-")
# Longest encoded element kept whole: the table's folder adds 33 characters
# (``_<uuid>``) and a path segment may hold 255 bytes.
_MAX_SEGMENT = 120
_LOCAL = ("", "localhost")


def encode_element(element: str) -> str:
    """One path segment for a name element: safe characters as they are, any
    other as ``~`` and the hex of its UTF-8 bytes (``a.b`` → ``a~2eb``,
    ``..`` → ``~2e~2e``). A long result is cut and given a digest of the whole
    name, so it stays one valid segment."""
    raw = element.encode("utf-8", "surrogatepass")
    out = "".join(c if c in _SAFE else "".join(f"~{b:02x}" for b in
                                               c.encode("utf-8", "surrogatepass"))
                  for c in element)
    if len(out) <= _MAX_SEGMENT:
        return out
    digest = hashlib.sha256(raw).hexdigest()[:16]
    cut = out[:_MAX_SEGMENT - 18]
    tilde = cut.rfind("~")
    if tilde >= len(cut) - 2:  # do not end inside an escape
        cut = cut[:tilde]
    return f"{cut}--{digest}"


@dataclass(frozen=True, slots=True)
class Where:
    """A location taken apart: scheme, authority (bucket, host) and path."""

    scheme: str
    netloc: str
    path: str

    @property
    def uri(self) -> str:
        return f"{self.scheme}://{self.netloc}{self.path}"

    @property
    def local(self) -> bool:
        return self.scheme == "file"


def split(location: str) -> Where:
    """Take a location apart and normalise its path. A bare absolute path and
    ``file:/x`` are ``file:///x``. Anything that cannot name a file safely
    (relative, control characters, another host's file) is a 400."""
    if not location:
        raise bad_request("Invalid location: empty")
    if len(location) > MAX_PATH_CHARS or location.count("/") > MAX_PATH_DEPTH:
        raise bad_request(f"Invalid location {_shown(location)}: longer than "
                          f"{MAX_PATH_CHARS} characters or {MAX_PATH_DEPTH} levels")
    if any(ord(c) < 0x20 or c == "\x7f" for c in location):
        raise bad_request(f"Invalid location {_shown(location)}: it holds a control character")
    scheme, sep, rest = location.partition("://")
    if not sep:
        path = location[len("file:"):] if location.lower().startswith("file:") else location
        scheme, netloc = "file", ""
    else:
        scheme = scheme.lower()
        netloc, slash, path = rest.partition("/")
        path = (slash + path) or "/"  # s3://bucket is the bucket's root
        if scheme == "file":
            if netloc.lower() not in _LOCAL:
                raise bad_request(f"Invalid location {_shown(location)}: a file:// location "
                                  "names no other host")
            netloc = ""
    if not path.startswith("/"):
        raise bad_request(f"Invalid location {_shown(location)}: expected an absolute path "
                          "or a URI (file:///..., s3://bucket/...)")
    return Where(scheme, netloc, _normpath(path))


def _normpath(path: str) -> str:
    p = posixpath.normpath(path)
    # POSIX keeps a leading '//' (it may mean something else); no store here does.
    return "/" + p.lstrip("/") if p.startswith("//") else p


# The ways a consumer may read a path: as it is, percent-decoded (a URI),
# with '\\' as a separator, or both.
_READINGS: tuple[Callable[[str], str], ...] = (
    lambda p: p,
    lambda p: unquote(p, errors="replace"),
    lambda p: p.replace("\\", "/"),
    lambda p: unquote(p, errors="replace").replace("\\", "/"),
)


def _inside_all(path: str, base: str) -> bool:
    """Whether ``path`` stays below ``base`` however it is read (the warehouse
    read the same way: its own URI may be percent-encoded)."""
    return all(_inside(_normpath(r(path)), _normpath(r(base))) for r in _READINGS)


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def under(where: Where, folder: Where) -> bool:
    """Whether ``where`` is ``folder`` or inside it (as written: same
    storage, path at ``/`` boundaries)."""
    return (where.scheme, where.netloc) == (folder.scheme, folder.netloc) and \
        _inside(where.path, folder.path)


def _shown(location: str) -> str:
    return repr(location if len(location) <= 200 else location[:200] + "...")


class Locations:
    """The warehouse, and whether objects may live outside it."""

    def __init__(self, warehouse: str, allow_external: bool) -> None:
        self.root = split(warehouse)
        self.warehouse = self.root.uri.rstrip("/")
        self.allow_external = allow_external
        # Only these schemes are ever opened: local files and the warehouse's
        # own storage (never ftp://, http:// ... that would make the server
        # connect out).
        self.schemes = frozenset({"file", self.root.scheme})

    def default(self, namespace: tuple[str, ...], name: str) -> str:
        # A suffix per object: the same name on two branches, or dropped and
        # created again, never shares a folder.
        return "/".join([self.warehouse, *(encode_element(e) for e in namespace),
                         f"{encode_element(name)}_{uuid.uuid4().hex}"])

    def check(self, location: str) -> str:
        """The normalised location, if the server may write or read there;
        otherwise a 400 that depends only on the text and, in a file
        warehouse, on the links inside it (never on what exists outside)."""
        return self.where(location).uri

    def where(self, location: str) -> Where:
        where = split(location)
        if where.scheme not in self.schemes:
            raise bad_request(
                f"Location {_shown(location)} uses scheme '{where.scheme}': this server reads "
                f"and writes only {', '.join(sorted(self.schemes))} locations")
        if self.allow_external:
            return where
        if (where.scheme, where.netloc) != (self.root.scheme, self.root.netloc) or \
                not _inside_all(where.path, self.root.path) or not self.inside_real(where.path):
            # A link inside the warehouse that leads out is answered as any
            # location outside is (and without saying where it leads).
            raise self.outside(location)
        return where

    def check_placed(self, location: str, properties: Mapping[str, str]) -> None:
        """400 unless the server may write where an object lives: its
        location and its write.metadata.path (where its next metadata file
        goes). Register adopts a file whose own location says this."""
        self.check(location)
        if properties.get(METADATA_PATH):
            self.check(properties[METADATA_PATH])

    def outside(self, location: str) -> SapwoodError:
        return bad_request(
            f"Location {_shown(location)} is outside the warehouse {self.warehouse}; this "
            "server does not allow external locations (SAPWOOD_ALLOW_EXTERNAL_LOCATIONS)")

    def inside_real(self, path: str) -> bool:
        """For a local file: whether it is inside the warehouse once symbolic
        links are followed (a link in the warehouse may point anywhere; the
        parts of ``path`` that do not exist yet are taken as written)."""
        if self.allow_external or not self.root.local:
            return True
        return _inside(os.path.realpath(path), self.real_root())

    def confined(self, where: Where) -> list[str] | None:
        """For a location in a file warehouse that keeps every file inside
        (external locations not allowed): the parts of its path below the
        warehouse folder, to write it without following links
        (catalog.metadata.local_files); otherwise None."""
        if self.allow_external or not self.root.local or not where.local or \
                not _inside(where.path, self.root.path):
            return None
        below = where.path[len(self.root.path.rstrip("/")):].strip("/")
        return below.split("/") if below else []

    def real_root(self) -> str:
        """The warehouse folder's real path (read each time: an operator may
        move a link the warehouse itself is reached through)."""
        return os.path.realpath(self.root.path)


def spelled(checked: str, given: str) -> str:
    """The location a table or view keeps, once ``Locations.check`` passed
    ``given`` as ``checked``: the caller's spelling (less a trailing slash),
    as Iceberg keeps it, so ``file:/a/b`` comes back ``file:/a/b``, not
    ``file:///a/b``. Only a spelling of the same URI is kept: a path the
    check had to normalise (``..``, ``//``, ``.``) is kept normalised, so
    what is stored is what was judged."""
    given = given.rstrip("/") or given
    short = "file:/" + checked[len("file:///"):] if checked.startswith("file:///") else None
    return given if given in (checked, short) else checked
