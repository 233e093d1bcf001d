#!/usr/bin/env sh
# Install Debian's Chromium for the explorer's end-to-end test (tests/test_app_e2e.py).
#
#     sh examples/app/install-browser.sh
#
# Idempotent: does nothing when chromium (or $CHROMIUM) is already there. Needs apt-get and
# root, or sudo. The test itself starts Chromium headless with a fresh profile.
set -eu

if [ -n "${CHROMIUM:-}" ] && [ -x "$CHROMIUM" ]; then
  echo "using CHROMIUM=$CHROMIUM"
  exit 0
fi
if command -v chromium >/dev/null 2>&1; then
  echo "chromium is already installed: $(command -v chromium)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install Chromium yourself and set CHROMIUM=/path/to/chromium" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
chromium --version
