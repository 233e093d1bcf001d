#!/usr/bin/env sh
# Install Debian's Chromium and its WebDriver for the explorer's end-to-end test
# (tests/test_app_e2e.py drives them with Selenium; nothing is downloaded at test time).
#
#     sh examples/app/install-browser.sh
#
# Idempotent: does nothing when chromium and chromedriver (or $CHROMIUM and $CHROMEDRIVER)
# are already there. Needs apt-get and root, or sudo.
set -eu

browser="${CHROMIUM:-$(command -v chromium || true)}"
driver="${CHROMEDRIVER:-$(command -v chromedriver || true)}"
if [ -n "$browser" ] && [ -x "$browser" ] && [ -n "$driver" ] && [ -x "$driver" ]; then
  echo "chromium and chromedriver are already installed: $browser, $driver"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install Chromium and its chromedriver yourself and set" \
    "CHROMIUM=/path/to/chromium CHROMEDRIVER=/path/to/chromedriver" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-liberation >/dev/null
chromium --version
chromedriver --version
