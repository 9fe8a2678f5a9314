"""Package relocation ("shading") of compiled Java classes, in pure Python.

Iceberg's runtime jar refers to Jackson and HttpClient 5 under
``org.apache.iceberg.shaded.``; the copy on PyPI leaves those classes out. A
relocated class differs from the original only in strings: class names in its
constant pool (``com/fasterxml/jackson/...``, descriptors ``Lcom/...;``, and
the dotted names used for reflection) and the jar entry's own path. Constant
pool entries are addressed by index, never by byte offset, so rewriting the
UTF-8 entries in place (with their new lengths) leaves the rest of the class
valid; this is what jarjar and Maven's shade plugin do to constant pools.
"""

from __future__ import annotations

import os
import struct
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

# Sizes of the constant pool entries that are not UTF-8, by tag (JVMS 4.4).
_FIXED = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2,
          17: 4, 18: 4, 19: 2, 20: 2}
_MAGIC = b"\xca\xfe\xba\xbe"


class RelocationError(Exception):
    """A class file this routine cannot read (corrupt, or an unknown constant kind)."""


@dataclass(frozen=True)
class Relocation:
    """Move package ``source`` (dotted, e.g. ``com.fasterxml.jackson``) under ``prefix``."""

    source: str
    prefix: str

    def pairs(self) -> list[tuple[bytes, bytes]]:
        dotted = self.source + "."
        moved = self.prefix + dotted
        return [(dotted.replace(".", "/").encode(), moved.replace(".", "/").encode()),
                (dotted.encode(), moved.encode())]


def _rewrite(data: bytes, pairs: Sequence[tuple[bytes, bytes]]) -> bytes:
    for old, new in pairs:
        if old in data:
            # Relocating twice must be a no-op: shield names already moved.
            data = data.replace(new, b"\0sapwood\0").replace(old, new).replace(
                b"\0sapwood\0", new)
    return data


def relocate_class(data: bytes, relocations: Sequence[Relocation]) -> bytes:
    """The class file ``data`` with every UTF-8 constant relocated."""
    if data[:4] != _MAGIC:
        raise RelocationError("not a class file")
    pairs = [p for r in relocations for p in r.pairs()]
    count = struct.unpack_from(">H", data, 8)[0]
    out = [data[:10]]
    pos, index = 10, 1
    while index < count:
        tag = data[pos]
        if tag == 1:
            length = struct.unpack_from(">H", data, pos + 1)[0]
            text = _rewrite(data[pos + 3:pos + 3 + length], pairs)
            if len(text) > 0xFFFF:
                raise RelocationError("a relocated constant is longer than 65535 bytes")
            out.append(b"\x01" + struct.pack(">H", len(text)) + text)
            pos += 3 + length
        elif tag in _FIXED:
            out.append(data[pos:pos + 1 + _FIXED[tag]])
            pos += 1 + _FIXED[tag]
            if tag in (5, 6):  # longs and doubles take two slots
                index += 1
        else:
            raise RelocationError(f"unknown constant pool tag {tag} at byte {pos}")
        index += 1
    out.append(data[pos:])
    return b"".join(out)


def relocate_name(name: str, relocations: Sequence[Relocation]) -> str:
    pairs = [p for r in relocations for p in r.pairs()]
    return _rewrite(name.encode(), pairs).decode()


def _skipped(name: str) -> bool:
    """Entries that must not be copied into a merged, relocated jar."""
    upper = name.upper()
    return (name.endswith("/") or name.startswith("META-INF/versions/")
            or name.endswith("module-info.class") or upper == "META-INF/MANIFEST.MF"
            or upper.endswith((".SF", ".RSA", ".DSA", ".EC"))
            or (name.startswith("META-INF/") and "LICENSE" not in upper
                and "NOTICE" not in upper and not name.startswith("META-INF/services/")))


def build_relocated_jar(sources: Iterable[Path], relocations: Sequence[Relocation],
                        target: Path) -> int:
    """Write ``target``: the classes and resources of ``sources``, relocated, with
    their licences kept per jar. Returns the number of classes."""
    classes = 0
    seen: set[str] = set()
    tmp = target.with_name(f"{target.name}.{os.getpid()}.part")  # builders may race
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("META-INF/MANIFEST.MF",
                     "Manifest-Version: 1.0\r\nCreated-By: sapwood spark-setup\r\n\r\n")
        for source in sources:
            with zipfile.ZipFile(source) as jar:
                for info in jar.infolist():
                    name = info.filename
                    if _skipped(name):
                        continue
                    data = jar.read(info)
                    if name.endswith(".class"):
                        data = relocate_class(data, relocations)
                        classes += 1
                    elif name.startswith("META-INF/services/"):
                        data = _rewrite(data, [p for r in relocations for p in r.pairs()])
                    elif name.startswith("META-INF/"):
                        name = f"META-INF/{source.stem}/{name[len('META-INF/'):]}"
                    new_name = relocate_name(name, relocations)
                    if new_name in seen:
                        continue
                    seen.add(new_name)
                    out.writestr(new_name, data)
    tmp.replace(target)
    return classes
