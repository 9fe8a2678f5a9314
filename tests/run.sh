#!/usr/bin/env bash
# The test command (README): installs what the suite needs, then runs it.
#   bash tests/run.sh [pytest args]
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# PostgreSQL's server binaries (initdb, pg_ctl) come from Debian's package.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing PostgreSQL (Debian package 'postgresql')" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "note: PostgreSQL not found; install the 'postgresql' package to run those tests" >&2
  fi
fi

# Spark needs a Java runtime (Debian's headless JRE 17).
if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Java (Debian package 'openjdk-17-jre-headless')" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      openjdk-17-jre-headless >/dev/null
  else
    echo "note: Java not found; install a Java 17 runtime to run the Spark tests" >&2
  fi
fi

"$PY" -m pip install --quiet --disable-pip-version-check -e '.[test,spark]' || exit 1
# The Iceberg jars for Spark, built once into the user cache (says what it did).
"$PY" -m api.cli spark-setup || echo "note: Spark setup failed; the Spark tests will say why" >&2
"$PY" -m ruff check . || exit 1
"$PY" -m pytest -q "$@"
rc=$?
if [ "$rc" = 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$rc"
