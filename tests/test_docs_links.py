"""Every relative link of README.md and docs/*.md names a file of this
repository (a clone has nothing beside it), and every #anchor a heading there."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs_blocks import ROOT, doc_files

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as '-'."""
    heads = re.findall(r"^#+\s+(.*)$", path.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_relative_links_stay_in_the_repository() -> None:
    bad = []
    checked = 0
    for doc in doc_files():
        for target in LINK.findall(doc.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            path = (doc.parent / file).resolve() if file else doc
            checked += 1
            if not path.is_relative_to(ROOT) or not path.exists():
                bad.append(f"{doc.relative_to(ROOT)}: {target} (no such file in the repository)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                bad.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert checked > 20, "found too few links: is the pattern broken?"
    assert not bad, "\n".join(bad)
