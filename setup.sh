#!/usr/bin/env bash
# Set up a machine for Six Arena. Idempotent: a second run only checks.
#
# - a virtualenv in .venv with the arena and its test tools;
# - as root on Debian: bubblewrap and libseccomp2 (the local sandbox), the toolchains of the sample
#   bots and of the author's kit (nodejs, gcc, g++, golang-go, rustc, a JDK, make,
#   libc6-dev, perl, ruby), docker.io and debootstrap;
#   a Docker engine started without a default bridge (bots never get a network);
#   and the base image bots run on, with Ruby, g++, Go, Rust and a JDK added to its
#   extra runtimes for the sample bot in Ruby and the kit's C++, Go, Rust and Java bots
#   (`arena image build --with +ruby,g++,golang-go,rustc,default-jdk-headless`, a few
#   minutes once;
#   ARENA_IMAGE_PACKAGES=ruby,golang-go sets the whole list instead);
#   Chromium and its driver for the browser tests.
# ARENA_NO_DOCKER=1 skips the Docker part, ARENA_NO_BROWSER=1 the browser.
set -euo pipefail
cd "$(dirname "$0")"

# The system Python, when there is one (any Python 3.11+ works: local bots run on a
# runtime of their own that their users can read, whatever Python the arena runs on).
PY=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
is_root() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }
apt_updated=
apt_install() {
    [ -n "$apt_updated" ] || { apt-get update -qq; apt_updated=1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if [ ! -x .venv/bin/python ]; then
    if ! "$PY" -m venv .venv 2>/dev/null; then
        rm -rf .venv
        if is_root; then apt_install python3-venv; else
            echo "setup: '$PY -m venv' failed: install python3-venv (Debian) and run again" >&2
            exit 1
        fi
        "$PY" -m venv .venv
    fi
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'

if is_root; then
    missing=()
    command -v bwrap >/dev/null || missing+=(bubblewrap)
    # libseccomp writes the local sandbox's seccomp filter (through pyseccomp).
    ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2 ' || missing+=(libseccomp2)
    # What the sample bots in other languages need to build and run as local processes.
    command -v node >/dev/null || missing+=(nodejs)
    command -v gcc >/dev/null || missing+=(gcc)
    command -v make >/dev/null || missing+=(make)
    [ -e /usr/include/stdio.h ] || missing+=(libc6-dev)
    command -v perl >/dev/null || missing+=(perl)
    command -v ruby >/dev/null || missing+=(ruby)
    # What `arena bot new --lang cpp|go` folders build with (the author's kit).
    command -v g++ >/dev/null || missing+=(g++)
    [ -x /usr/bin/go ] || missing+=(golang-go)
    [ -x /usr/bin/rustc ] || missing+=(rustc)
    command -v javac >/dev/null || missing+=(default-jdk-headless)
    # The cluster's TLS test makes its certificates with OpenSSL.
    command -v openssl >/dev/null || missing+=(openssl)
    if [ "${ARENA_NO_DOCKER:-}" != 1 ]; then
        command -v dockerd >/dev/null || missing+=(docker.io)
        command -v debootstrap >/dev/null || missing+=(debootstrap)
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        echo "setup: installing ${missing[*]}"
        apt_install "${missing[@]}"
    fi
    # The browser tests drive Debian's Chromium through its driver (no browser download
    # is possible here). ARENA_NO_BROWSER=1 leaves them out.
    if [ "${ARENA_NO_BROWSER:-}" != 1 ] && { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; }; then
        echo "setup: installing chromium and chromium-driver (browser tests)"
        apt_install --no-install-recommends chromium chromium-driver
    fi
fi

if [ "${ARENA_NO_DOCKER:-}" != 1 ] && command -v dockerd >/dev/null; then
    if ! docker info >/dev/null 2>&1 && is_root; then
        echo "setup: starting the Docker engine (no default bridge)"
        setsid nohup dockerd --bridge=none --iptables=false --ip6tables=false >/var/log/arena-dockerd.log 2>&1 < /dev/null &
        for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
    fi
    if docker info >/dev/null 2>&1; then
        # Extra runtimes in the base image: a layer of Debian packages over it (seconds).
        .venv/bin/arena image build --with "${ARENA_IMAGE_PACKAGES-+ruby,g++,golang-go,rustc,default-jdk-headless}"
    else
        echo "setup: no Docker engine answers: bots will run as local processes"
    fi
fi
echo "setup: ready (.venv/bin/arena)"
