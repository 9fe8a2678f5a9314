"""PySpark side of Sapwood; talks to the catalog over HTTP only."""
