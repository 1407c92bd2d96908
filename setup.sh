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
    if ! "$PY" -m venv .venv 2>/dev/null; then
        # Debian keeps venv support in its own package.
        rm -rf .venv
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
        else
            echo "setup: '$PY -m venv' failed: install python3-venv (Debian) and run again" >&2
            exit 1
        fi
        "$PY" -m venv .venv
    fi
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
echo "setup: ready (.venv/bin/arena)"
