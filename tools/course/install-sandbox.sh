#!/usr/bin/env sh
# Install bubblewrap, the sandbox the grader's worker runs a student's code in, and
# libseccomp, for its filter that lets the worker start no process (as root the process
# limit does not hold in the sandbox; tools/course/README.md, "The grader's threat model").
#
#     sh tools/course/install-sandbox.sh
#
# Idempotent: does nothing when bwrap and libseccomp are already there. Needs apt-get and root, or sudo.
# Without bubblewrap the grader still grades (as root: the worker runs as a user of its
# own), but `course:attacks` needs it on a machine whose files other users may read (a
# checkout of this repository holds the solution).
set -eu

has_seccomp() {
  ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'
}
if command -v bwrap >/dev/null 2>&1 && has_seccomp; then
  echo "bubblewrap and libseccomp are already installed: $(command -v bwrap)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install bubblewrap (bwrap) and libseccomp yourself" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends bubblewrap libseccomp2 >/dev/null
bwrap --version
