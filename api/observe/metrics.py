"""Prometheus metrics: requests by route template and status with latency
histograms (recorded by the edge layer, api.edge), and what the store did —
commits, conflicts, retries, merges by outcome, cache hit ratios, database
pool use — read from the catalog (catalog.health) at scrape time. Each app has its own
registry, so several apps in one process (tests) do not collide."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from catalog.health import Health

# Latency buckets from a cached read (sub-ms) to a large merge.
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.requests = Counter("sapwood_http_requests", "HTTP requests answered",
                                ["method", "route", "status"], registry=self.registry)
        self.latency = Histogram("sapwood_http_request_duration_seconds",
                                 "Time to answer an HTTP request", ["method", "route"],
                                 buckets=_BUCKETS, registry=self.registry)
        self._series: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        self._decisions: dict[tuple[str, bool, str], Any] = {}
        self.delegation = Counter(
            "sapwood_storage_access", "Signing and vending decisions by outcome and reason",
            ["kind", "outcome", "reason"], registry=self.registry)

    def decided(self, kind: str, granted: bool, reason: str) -> None:
        """One signing or vending decision (api.delegated)."""
        key = (kind, granted, reason)
        series = self._decisions.get(key)
        if series is None:
            series = self._decisions[key] = self.delegation.labels(
                kind, "granted" if granted else "refused", reason)
        series.inc()

    def watch(self, health: Health) -> None:
        """Report the catalog's counters, caches and connections (once the
        app has opened it: catalog.health)."""
        self.registry.register(StoreCollector(health))

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        # The labelled series, looked up once each (labels() validates and
        # locks on every call: a few µs of every request).
        series = self._series.get((method, route, status))
        if series is None:
            series = (self.requests.labels(method, route, str(status)),
                      self.latency.labels(method, route))
            self._series[(method, route, status)] = series
        series[0].inc()
        series[1].observe(seconds)


class StoreCollector(Collector):
    def __init__(self, health: Health) -> None:
        self.health = health

    def collect(self) -> Iterator[Metric]:
        counts, merged = self.health.counts(), self.health.merges()
        for name, metric, help_ in (
                ("commits", "sapwood_store_commits", "Commits written"),
                ("conflicts", "sapwood_store_conflicts", "Commits refused by the commit rules"),
                ("retries", "sapwood_store_retries",
                 "Writes planned again because the branch moved"),
                ("gc_runs", "sapwood_gc_runs", "Garbage collections run by this process"),
                ("gc_removed_commits", "sapwood_gc_removed_commits",
                 "Commits garbage collection removed"),
                ("gc_removed_files", "sapwood_gc_removed_files",
                 "Warehouse files garbage collection removed")):
            c = CounterMetricFamily(metric, help_)
            c.add_metric([], counts.get(name, 0))
            yield c
        merges = CounterMetricFamily("sapwood_merges", "Merges and transplants by outcome",
                                     labels=["outcome"])
        for outcome in ("applied", "conflict", "dry_run"):
            merges.add_metric([outcome], merged.get(outcome, 0))
        yield merges
        ratio = GaugeMetricFamily("sapwood_cache_hit_ratio",
                                  "Hits ÷ look-ups of the store's in-process caches",
                                  labels=["cache"])
        held = GaugeMetricFamily("sapwood_cache_bytes",
                                 "What each in-process cache holds, in bytes (estimated)",
                                 labels=["cache"])
        budget = GaugeMetricFamily("sapwood_cache_budget_bytes",
                                   "What each in-process cache may hold, in bytes",
                                   labels=["cache"])
        for name, lru in self.health.caches().items():
            total = lru.hits + lru.misses
            ratio.add_metric([name], lru.hits / total if total else 0.0)
            held.add_metric([name], float(lru.bytes))
            if lru.max_bytes is not None:
                budget.add_metric([name], float(lru.max_bytes))
        yield ratio
        yield held
        yield budget
        pool = GaugeMetricFamily("sapwood_db_connections",
                                 "Database connections by pool and state",
                                 labels=["pool", "state"])
        for name, (in_use, idle) in self.health.pools().items():
            pool.add_metric([name, "in_use"], in_use)
            pool.add_metric([name, "idle"], idle)
        yield pool
