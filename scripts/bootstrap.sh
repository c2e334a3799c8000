# Sourced by ./cfglint and ./test: make sure .venv holds cfglint and its test tools.
# Re-installs when pyproject.toml changes; needs only a Python >= 3.11 on PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.cfglint-deps"

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

want="$(cksum < "$root/pyproject.toml")"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  py="$(find_python)"
  echo "cfglint: setting up $venv (first run only)..." >&2
  "$py" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root[dev]" >&2
  echo "$want" > "$stamp"
fi
