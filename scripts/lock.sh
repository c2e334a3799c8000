#!/usr/bin/env bash
# Regenerate the locked environments under requirements/ from pyproject.toml (see
# docs/development.md). Run it deliberately: after changing a dependency range, or to take
# newer releases (`scripts/lock.sh --upgrade`, or `--upgrade-package NAME`); then run ./test
# and commit the lock files with the change that needed them.
#   lint.txt: what ./cfglint installs (the package's own dependencies)
#   test.txt: ./test adds the [dev] tools
#   ci.txt:   .ci/run adds the logs and server extras (the probe's frameworks are pinned there)
# The locks are universal (every platform and Python >= 3.11) and carry hashes; installing
# them needs only pip (scripts/bootstrap.sh), so uv is needed only to update them:
#   python3 -m pip install uv
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
uv="${UV:-uv}"
export UV_CUSTOM_COMPILE_COMMAND="scripts/lock.sh"
compile() {
  local out="$1"; shift
  "$uv" pip compile --quiet --universal --generate-hashes --python-version 3.11 \
    pyproject.toml requirements/build.in "$@" -o "requirements/$out" "${extra_args[@]}"
}
extra_args=("$@")
compile lint.txt
compile test.txt --extra dev
compile ci.txt --extra dev --extra logs --extra server
