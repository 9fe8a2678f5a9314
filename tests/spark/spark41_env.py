"""A Python for the Spark 4.1 group (tests/spark/test_spark41.py): a
virtual environment of its own holding pyspark 4.1 and dbt, over this
interpreter's packages.

As tests/spark/dbt_env.py does for dbt: the venv sees this interpreter's
packages (a ``.pth`` naming its site-packages: sapwood, pytest and every pin
of the test command), and adds only what must differ, pinned: pyspark and
its py4j from constraints-spark41.txt, which shadow the 3.5 line's, and dbt
(tests/spark/dbt/requirements.txt), whose pathspec pin shadows mypy's, and a
``sapwood`` command of its own. It
lives in the user cache under a name that hashes what it holds, so it is
built once (about 40 s, most of it pyspark's 400 MB). ``python -m
tests.spark.spark41_env`` (tests/run.sh) builds it and prints its python.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from spark.errors import SetupError
from spark.jars import cache_dir
from tests.spark.dbt_env import REQUIREMENTS as DBT_REQUIREMENTS

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints-spark41.txt"
# What the venv installs itself, by name; the rest it sees from this interpreter.
OWN = ("pyspark", "py4j")
# Bump when the venv's making changes: a venv made by older code is not reused.
FORMAT = "3"


def _pins(path: Path) -> dict[str, str]:
    return {line.split("==")[0].lower(): line.strip() for line in path.read_text().splitlines()
            if "==" in line and not line.startswith("#")}


def wanted() -> list[str]:
    """The pins the venv installs: the line's pyspark and py4j, and dbt's."""
    line = _pins(CONSTRAINTS)
    return [line[name] for name in OWN] + list(_pins(DBT_REQUIREMENTS).values())


def venv_dir() -> Path:
    key = hashlib.sha256("\n".join([FORMAT, sys.version, sys.prefix, *wanted()]).encode())
    return cache_dir() / f"spark41-venv-{key.hexdigest()[:12]}"


def python() -> Path:
    """The venv's ``python``, built first if missing; SetupError if pip fails."""
    venv = venv_dir()
    exe = venv / "bin" / "python"
    done_marker = venv / ".installed"
    if done_marker.exists():
        return exe
    # Built where it lives (its scripts name its path); a half-built one is built again.
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "venv", str(venv)], venv)
    site = subprocess.run([str(exe), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # As site dirs, so that their own .pth files run too: sapwood's editable
    # install is one (its ``sapwood`` command imports cli through it).
    (Path(site) / "_sapwood_tests_parent.pth").write_text("".join(
        f"import site; site.addsitedir({p!r})\n" for p in dict.fromkeys(
            sysconfig.get_paths()[k] for k in ("purelib", "platlib"))))
    with tempfile.TemporaryDirectory(prefix="spark41-") as tmp:
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text("".join(pin + "\n" for pin in wanted()))
        # The line's pins for anything else pip adds, but for those dbt's differ in.
        dbt = _pins(DBT_REQUIREMENTS)
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("".join(pin + "\n" for name, pin in _pins(CONSTRAINTS).items()
                                       if name not in dbt))
        _run([str(exe), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              "-c", str(constraints), "-r", str(requirements)], venv)
    # The ``sapwood`` command of this venv (as pip would write the console
    # script), so that what the group runs as a user would (spark-setup, the
    # servers its tests start) runs on this venv's pyspark.
    script = venv / "bin" / "sapwood"
    script.write_text(f"#!{exe}\nimport sys\nfrom cli.main import main\n\nsys.exit(main())\n")
    script.chmod(0o755)
    done_marker.touch()
    return exe


def _run(step: list[str], venv: Path) -> None:
    done = subprocess.run(step, capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SetupError(f"could not build the Spark 4.1 venv {venv}: " + " ".join(said))


if __name__ == "__main__":
    print(python())
