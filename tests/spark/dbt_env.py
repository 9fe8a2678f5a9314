"""dbt for the Spark tests, in a virtual environment of its own
(tests/spark/dbt/requirements.txt says why it cannot join the test extra).

The venv sees this interpreter's packages (a ``.pth`` naming its
site-packages: the same pyspark and the same pins) and adds only dbt's, pinned; it lives in the
user cache under a name that hashes what it holds, so it is built once.
``python -m tests.spark.dbt_env`` (tests/run.sh) builds it and prints the
``dbt`` it made."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from importlib import metadata
from pathlib import Path

from spark.errors import SetupError
from spark.jars import cache_dir

ROOT = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).with_name("dbt")
REQUIREMENTS = PROJECT / "requirements.txt"
CONSTRAINTS = ROOT / "constraints.txt"


def venv_dir() -> Path:
    pins = [line for line in REQUIREMENTS.read_text().splitlines()
            if line and not line.startswith("#")]
    key = hashlib.sha256("\n".join([sys.version, sys.prefix, *pins]).encode()).hexdigest()[:12]
    return cache_dir() / f"dbt-venv-{key}"


def dbt() -> Path:
    """The venv's ``dbt``, installed first if missing; SetupError if pip fails."""
    # An interpreter whose own environment holds the pinned dbt already (the
    # Spark 4.1 group's, tests/spark/spark41_env.py) runs that one.
    here = Path(sys.executable).with_name("dbt")
    if here.exists() and _installed("dbt-core") == _pinned("dbt-core"):
        return here
    venv = venv_dir()
    exe = venv / "bin" / "dbt"
    done_marker = venv / ".installed"
    if done_marker.exists():
        return exe
    # A venv's scripts name its own path, so it is built where it lives; a
    # half-built one (no marker) is built again.
    shutil.rmtree(venv, ignore_errors=True)
    overridden = {line.split("==")[0].lower() for line in REQUIREMENTS.read_text().splitlines()
                  if "==" in line and not line.startswith("#")}
    venv.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=venv.parent, prefix=".dbt-") as tmp:
        # The project's pins, but for the ones this venv must differ in.
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("".join(
            line + "\n" for line in CONSTRAINTS.read_text().splitlines()
            if line.split("==")[0].lower() not in overridden))
        _run([sys.executable, "-m", "venv", str(venv)], venv)
        # This interpreter's packages (pyspark, the pins) seen from the dbt
        # venv, whether this interpreter is the system's or a venv's own (a
        # venv made from a venv with --system-site-packages would see the
        # base interpreter's, not this one's).
        site = subprocess.run([str(venv / "bin" / "python"), "-c",
                               "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        (Path(site) / "_sapwood_tests_parent.pth").write_text(
            "".join(p + "\n" for p in dict.fromkeys(
                sysconfig.get_paths()[k] for k in ("purelib", "platlib"))))
        _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
              "--disable-pip-version-check", "-c", str(constraints), "-r", str(REQUIREMENTS)],
             venv)
    done_marker.touch()
    return exe


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _pinned(name: str) -> str | None:
    for line in REQUIREMENTS.read_text().splitlines():
        if line.lower().startswith(f"{name}=="):
            return line.split("==", 1)[1].strip()
    return None


def _run(step: list[str], venv: Path) -> None:
    done = subprocess.run(step, capture_output=True, text=True, check=False, timeout=900)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SetupError(f"could not install dbt into {venv}: " + " ".join(said))


if __name__ == "__main__":
    print(dbt())
