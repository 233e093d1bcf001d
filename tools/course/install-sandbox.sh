#!/usr/bin/env sh
# Install bubblewrap, the sandbox the grader's worker runs a student's code in
# (tools/course/README.md, "The grader's threat model").
#
#     sh tools/course/install-sandbox.sh
#
# Idempotent: does nothing when bwrap is already there. Needs apt-get and root, or sudo.
# Without bubblewrap the grader still grades (as root: the worker runs as a user of its
# own), but `course:attacks` needs it on a machine whose files other users may read (a
# checkout of this repository holds the solution).
set -eu

if command -v bwrap >/dev/null 2>&1; then
  echo "bubblewrap is already installed: $(command -v bwrap)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install bubblewrap (bwrap) yourself" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null
bwrap --version
