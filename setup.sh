#!/usr/bin/env bash
# Set up a fresh machine for Six Arena: a virtualenv in .venv with the arena and its
# test tools. Idempotent: a second run only checks that everything is in place.
set -euo pipefail
cd "$(dirname "$0")"
# The system Python, when there is one: bots run from this environment as an
# unprivileged user, who must be able to read the interpreter (a Python under /root
# is out of its reach).
PY=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
echo "setup: ready (.venv/bin/arena)"
