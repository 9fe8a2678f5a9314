"""Imports: another catalog's history brought into this one
(``sapwood import --from-nessie``: a Nessie repository's references and
every commit, with their authors, times, properties and contents).

Owns reading Nessie's v2 API over HTTP (``nessie_api``), what a Nessie commit
becomes here (``nessie_values``), the checks each table and view value
passes first (``checks``), the run (``nessie``) and its report (``report``).
Imports of catalog/ the kernel, metadata/ (the file checks and location
claims) and views/ (a view value is analysed where it lands); of store/,
``store.imports``, which writes commits with given parents and times.
"""
