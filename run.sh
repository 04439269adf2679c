#!/usr/bin/env bash
# gridshift's one entry point on a fresh machine that has only python3:
#   ./run.sh test [ARGS]               set up everything, then run the test suite (pytest, 2 workers; ARGS: pytest's)
#   ./run.sh lint                      ruff + import-linter (the import direction) + `dg check defs`
#   ./run.sh ui [--home DIR] [ARGS]    the Dagster UI (`dg dev`) on the gridshift home's instance (= gridshift ui)
#   ./run.sh gridshift ...             set up everything, then run a gridshift command (gridshift --help lists them)
#   ./run.sh python ...                or any program in the environment
#   ./run.sh install-chromium          headless Chromium (Debian's chromium) for the UI's browser test, and
#   ./run.sh install-postgresql        Debian's PostgreSQL server for the Dagster-on-PostgreSQL test: as root or
#                                      through sudo; never done implicitly (system packages, root)
#   ./run.sh warm [POLICY ...]         compile the simulation kernels a run of POLICY needs (default lowest_carbon)
#                                      now, once: a no-op when they are in Numba's cache (gridshift run says so)
# It installs uv (into .tools/ if not on PATH) and the locked environment (uv sync --locked).
# Project commands run in the directory you call from, so relative paths (--out, --home) are yours.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"

# System packages, so only on request: `test` never installs them (that would need root and apt behind the
# caller's back); without one its test is skipped naming the command, and fails under CI=true.
case "${1:-}" in
  install-chromium | install-postgresql)
    PKG="${1#install-}"
    if [ "$PKG" = chromium ]; then present() { command -v chromium >/dev/null 2>&1; }
    else present() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }; fi
    if present; then echo "$PKG: installed"; exit 0; fi
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
      command -v sudo >/dev/null 2>&1 || { echo "$1: needs root or sudo (apt-get install $PKG)" >&2; exit 1; }
      SUDO=sudo
    fi
    command -v apt-get >/dev/null 2>&1 || { echo "$1: no apt-get: install $PKG with your system's package manager" >&2; exit 1; }
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$PKG"
    exit 0
    ;;
esac
# Trust the system certificate store (registries behind a TLS-inspecting proxy need it).
export UV_SYSTEM_CERTS="${UV_SYSTEM_CERTS:-true}"

if command -v uv >/dev/null 2>&1; then
  UV=uv
else
  if [ ! -x "$ROOT/.tools/bin/uv" ]; then
    echo "gridshift: first run: installing uv into $ROOT/.tools (one-time, a few seconds)..." >&2
    python3 -m venv "$ROOT/.tools"
    "$ROOT/.tools/bin/python" -m pip install --quiet --disable-pip-version-check "uv>=0.13"
  fi
  UV="$ROOT/.tools/bin/uv"
fi

if [ ! -d "$ROOT/.venv" ]; then
  echo "gridshift: first run: installing the locked environment into $ROOT/.venv" \
       "(Dagster, polars, DuckDB, Numba...; about a minute, downloads cached afterwards)..." >&2
fi
# Optional extras (pyproject [project.optional-dependencies]) to install too: GRIDSHIFT_EXTRAS=rl,iso.
# Extras once asked for are remembered in the environment (.venv/.gridshift-extras) and kept by every
# later call: `uv sync` installs exactly what it is told, so a plain call would otherwise uninstall them.
# To drop them, remove .venv.
EXTRAS_FILE="$ROOT/.venv/.gridshift-extras"
ASKED="${GRIDSHIFT_EXTRAS:-}"
GRIDSHIFT_EXTRAS="$(printf '%s\n' $(cat "$EXTRAS_FILE" 2>/dev/null) ${ASKED//,/ } | sed '/^$/d' | sort -u | paste -sd' ' -)"
EXTRA_ARGS=()
for extra in $GRIDSHIFT_EXTRAS; do EXTRA_ARGS+=(--extra "$extra"); done
"$UV" sync --locked --quiet --project "$ROOT" ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"}
echo "$GRIDSHIFT_EXTRAS" > "$EXTRAS_FILE"
uvrun() { "$UV" run --frozen --project "$ROOT" "$@"; }
# Bytecode: compiled once per installed environment (the lock file and the extras), and gridshift's own
# modules whenever they change. Python would otherwise compile ~3,000 modules from source in every new
# process where writing .pyc files is off (PYTHONDONTWRITEBYTECODE, common in containers): about 8 of
# the 29 CPU-seconds of a whole-mirror ingest, in a cProfile of the ingest CLI.
STAMP="$ROOT/.venv/.gridshift-bytecode"
WANT="$(cat "$ROOT/uv.lock" "$ROOT/pyproject.toml" | cksum) extras=$GRIDSHIFT_EXTRAS"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  "$UV" sync --locked --quiet --compile-bytecode --project "$ROOT" ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"}
  echo "$WANT" > "$STAMP"
fi
(cd "$ROOT" && uvrun python -m compileall -q -j 0 gridshift gridshift_plots gridshift_cli pipelines warehouse scenario_builder sim_core \
  dagster_project benchmarks >/dev/null)

case "${1:-}" in
  test)
    shift
    cd "$ROOT"
    # Two pytest-xdist workers (one on a 1-core machine), each test file on one worker so its module fixtures are
    # built once: the suite is mostly compiling kernels and exporting bundles, which one process does on one
    # core. Later arguments win: `-n 0` runs it in this process; more workers need both `-n 8 --maxprocesses 8`
    # (the cap bounds any -n; each worker can reach ~5.5 GB of memory).
    uvrun pytest -q --numprocesses auto --maxprocesses 2 --dist loadfile "$@"
    ;;
  lint)
    cd "$ROOT"
    uvrun ruff check .
    uvrun lint-imports
    uvrun dg check defs
    ;;
  warm)
    shift
    exec "$UV" run --frozen --project "$ROOT" python -m sim_core.precompile "$@"
    ;;
  ui)
    shift
    exec "$UV" run --frozen --project "$ROOT" gridshift ui "$@"
    ;;
  "")
    echo "usage: ./run.sh test | lint | ui | warm [POLICY ...] | gridshift <command> [args...] | <program> [args...]" >&2
    exit 2
    ;;
  *)
    exec "$UV" run --frozen --project "$ROOT" "$@"
    ;;
esac
