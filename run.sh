#!/usr/bin/env bash
# gridshift's one entry point on a fresh machine that has only python3:
#   ./run.sh test                      set up everything, then run the test suite
#   ./run.sh lint                      ruff + `dg check defs`
#   ./run.sh scenario_builder ...      set up everything, then run any project command
# It installs uv (into .tools/ if not on PATH) and the locked environment (uv sync --locked).
set -euo pipefail
cd "$(dirname "$0")"
# Trust the system certificate store (registries behind a TLS-inspecting proxy need it).
export UV_SYSTEM_CERTS="${UV_SYSTEM_CERTS:-true}"

if command -v uv >/dev/null 2>&1; then
  UV=uv
else
  if [ ! -x .tools/bin/uv ]; then
    python3 -m venv .tools
    .tools/bin/python -m pip install --quiet --disable-pip-version-check "uv>=0.13"
  fi
  UV=.tools/bin/uv
fi

"$UV" sync --locked --quiet

case "${1:-}" in
  test)
    shift
    exec "$UV" run pytest -q "$@"
    ;;
  lint)
    "$UV" run ruff check .
    "$UV" run lint-imports
    exec "$UV" run dg check defs
    ;;
  "")
    echo "usage: ./run.sh test | lint | <command> [args...]" >&2
    exit 2
    ;;
  *)
    exec "$UV" run "$@"
    ;;
esac
