"""bench/scale_bench.py's memory figure for fsck is fsck's own: the benchmark
measures it from a process that holds far more (the catalog it built: 1.5 GB
at 10^6 keys), and once printed that process's peak as fsck's."""

from bench.scale_bench import build, fsck_rss_mb

_BALLAST_MB = 512


def test_the_fsck_figure_is_fscks_memory_not_the_benchmarks(tmp_path):
    url = build(tmp_path, 20, 50, 3)
    ballast = b"\x01" * (_BALLAST_MB << 20)  # resident: every byte written
    mb, _, line = fsck_rss_mb(url)
    assert line.startswith("4 refs, 63 commits (0 unreachable)"), line
    # fsck of 2,082 keys: an interpreter and a batch of commits, far below
    # what this process holds (the figure was this process's peak: 512 MB
    # and more).
    assert 30 < mb < 300, mb
    parallel_mb, _, _ = fsck_rss_mb(url, "--parallel")  # two interpreters
    assert 60 < parallel_mb < 450, parallel_mb
    assert len(ballast) == _BALLAST_MB << 20
