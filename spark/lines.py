"""The Spark lines Sapwood supports, and which one an installed pyspark is.

A line is a Spark minor version with its Scala: what Iceberg publishes a
Spark runtime for (``iceberg-spark-runtime-<line>_<scala>``) and what
Sapwood's SQL extension has a build module for (spark/sql-extension/
spark-<line>). Iceberg 1.12 publishes runtimes for Spark 3.5 (Scala 2.12),
4.0 and 4.1 (Scala 2.13); Spark 4.2 has none (the 4.1 runtime fails on it:
Spark 4.2 made ``catalog.View`` a class). Sapwood supports 3.5 and 4.1, each
with its own constraints file (README).
"""

from __future__ import annotations

from dataclasses import dataclass

from spark.errors import SetupError

# The newest 1.12.x on Maven Central, for every line: its Spark runtimes and
# its AWS bundle (the AWS SDK that S3FileIO needs).
ICEBERG = "1.12.0"


@dataclass(frozen=True)
class SparkLine:
    name: str         # "3.5": Spark's major.minor
    scala: str        # "2.12": the Scala its jars are built for
    constraints: str  # the constraints file that installs it (README)

    @property
    def runtime(self) -> str:
        """Iceberg's Spark runtime artifact for the line."""
        return f"iceberg-spark-runtime-{self.name}_{self.scala}"

    @property
    def module(self) -> str:
        """The SQL extension's Maven module for the line (spark/sql-extension)."""
        return f"spark-{self.name}"

    @property
    def tag(self) -> str:
        """``spark35``: how figures and file names name the line."""
        return "spark" + self.name.replace(".", "")

    def describe(self) -> str:
        return f"Spark {self.name} (Scala {self.scala})"


LINES = (SparkLine("3.5", "2.12", "constraints.txt"),
         SparkLine("4.1", "2.13", "constraints-spark41.txt"))


def supported() -> str:
    """The lines, as a refusal names them."""
    return " and ".join(f"{line.describe()}, pyspark {line.name}.x "
                        f"(pip install -c {line.constraints} -e '.[spark]')" for line in LINES)


def line_of(version: str) -> SparkLine:
    """The line of pyspark ``version``; SetupError naming the supported ones
    for any other."""
    major_minor = ".".join(version.split(".")[:2])
    for line in LINES:
        if line.name == major_minor:
            return line
    newer = tuple(int(p) for p in major_minor.split(".") if p.isdigit()) > (4, 1)
    why = (f"Iceberg {ICEBERG} publishes no Spark runtime for Spark {major_minor}" if newer
           else f"Sapwood does not support Spark {major_minor}")
    raise SetupError(f"pyspark {version} is not supported: {why}. Sapwood supports "
                     f"{supported()}")


def pyspark_version() -> str:
    try:
        import pyspark
    except ImportError as e:
        raise SetupError("pyspark is not installed: install the Spark extra: "
                         "python -m pip install -c constraints.txt -e '.[spark]' "
                         "(Spark 3.5; constraints-spark41.txt for Spark 4.1)") from e
    return str(pyspark.__version__)


def current() -> SparkLine:
    """The line of the installed pyspark (SetupError when none or unsupported)."""
    return line_of(pyspark_version())
