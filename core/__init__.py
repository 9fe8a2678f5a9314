"""Sapwood's pure domain layer: content keys, content values, reference grammar,
commit operations, conflicts and merge rules. No I/O lives here."""
