# Sourced by ./cfglint, ./test and .ci/run: make sure .venv holds the locked environment the
# caller needs, named by CFGLINT_ENV before sourcing:
#   lint (./cfglint): cfglint and its own dependencies (requirements/lint.txt)
#   test (./test):    and the test tools, the [dev] extra (requirements/test.txt)
#   ci   (.ci/run):   and the logs and server extras (requirements/ci.txt)
# Each lock is a superset of the one before, so a .venv set up for ./test serves ./cfglint.
# Installs from the lock with its hashes (pip only; updating the lock: scripts/lock.sh and
# docs/development.md) and again whenever the lock or pyproject.toml changes. Needs only a
# Python >= 3.11 on PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.cfglint-env"
levels=(lint test ci)
want_env="${CFGLINT_ENV:-lint}"

find_python() {
  for py in "${PYTHON:-}" python3 python3.13 python3.12 python3.11 python; do
    [ -n "$py" ] || continue
    if command -v "$py" >/dev/null 2>&1 &&
       "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$py"; return 0
    fi
  done
  echo "cfglint needs Python >= 3.11 on PATH (set PYTHON=/path/to/python3.11)" >&2
  return 1
}

rank() {
  local i
  for i in "${!levels[@]}"; do [ "${levels[$i]}" = "$1" ] && { echo "$i"; return 0; }; done
  echo "scripts/bootstrap.sh: CFGLINT_ENV must be one of ${levels[*]}, not '$1'" >&2
  return 1
}

# what an install of level $1 was made from: its lock and the package's metadata
fingerprint() {
  cat "$root/requirements/$1.txt" "$root/pyproject.toml" | cksum
}

# the installed level when .venv is current for it and covers $want_env; else nothing
current_env() {
  [ -x "$venv/bin/python" ] && [ -f "$stamp" ] || return 0
  local have sum
  read -r have sum < "$stamp" || return 0
  rank "$have" >/dev/null 2>&1 || return 0
  [ "$(rank "$have")" -ge "$(rank "$want_env")" ] || return 0
  [ "$sum" = "$(fingerprint "$have" | tr ' ' '_')" ] && echo "$have"
  return 0
}

rank "$want_env" >/dev/null
if [ -z "$(current_env)" ]; then
  echo "cfglint: setting up $venv from requirements/$want_env.txt (first run only)..." >&2
  [ -x "$venv/bin/python" ] || "$(find_python)" -m venv "$venv" >&2
  pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
  # exactly the locked releases, checked against their hashes
  "${pip[@]}" --require-hashes -r "$root/requirements/$want_env.txt" >&2
  # cfglint itself, editable; its backend (hatchling) is in the lock, so nothing unlocked
  # is fetched for the build
  "${pip[@]}" --no-deps --no-build-isolation -e "$root" >&2
  echo "$want_env $(fingerprint "$want_env" | tr ' ' '_')" > "$stamp"
fi
