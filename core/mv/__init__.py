"""Materialized views: the metadata document, freshness, and what a refresh records."""
