#!/usr/bin/env bash
# Set up the MiniTorch autograder of @PACKAGE@ (written by `hatch run course:autograder`).
#
# Run once by the grading service, as root, on a bare Ubuntu image, with the bundle
# unpacked in /autograder/source. AUTOGRADER_ROOT moves /autograder (the course tool's
# tests use a temporary folder); COURSE_PYTHON names a Python to build on instead of
# apt's; COURSE_AUTOGRADER_SITE makes an existing environment's site-packages (numpy,
# numba, pytest...) visible instead of downloading them, for offline tests of the bundle.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -z "${COURSE_PYTHON:-}" ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # bubblewrap: the sandbox the worker running a student's code starts in, where the
  # image allows user namespaces (otherwise the worker runs as a user of its own);
  # libseccomp2: its filter that lets the worker start no process.
  apt-get install -y -q --no-install-recommends python3 python3-venv python3-pip bubblewrap \
    libseccomp2
fi
PYTHON="${COURSE_PYTHON:-python3}"
rm -rf "$ROOT/venv"
VPY="$ROOT/venv/bin/python"
if [ -n "${COURSE_AUTOGRADER_SITE:-}" ]; then
  "$PYTHON" -m venv --without-pip "$ROOT/venv"
  site="$("$VPY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")"
  printf 'import site; site.addsitedir(%s)\n' "'$COURSE_AUTOGRADER_SITE'" >"$site/_course_site.pth"
else
  "$PYTHON" -m venv "$ROOT/venv"
fi
"$VPY" -m pip install --no-cache-dir --find-links "$SOURCE/wheels" -r "$SOURCE/requirements.txt"
@WARM@"$VPY" -c "import minitorch@IMPORTS@"
# Grade the course's own solution once, on this machine: it must earn every point (or the
# image build fails here), and the time each of its tests takes is the base of the time
# limits (a slow machine gets limits to match).
(cd "$SOURCE" && "$VPY" -m grader calibrate --course "$SOURCE/course")
# Only root reads the course's files (the solution, the hidden tests, the grader): the
# worker that runs a student's code is another user, or sees none of them at all.
chmod -R go-rwx "$SOURCE"
chmod 755 "$ROOT"
# Prove it: a probe started as a worker is, hashing every file it can read, must find
# none of the course's (the solution, the hidden tests, the graded data); else no grading.
(cd "$SOURCE" && "$VPY" -m grader selfcheck --course "$SOURCE/course")
echo "autograder of @PACKAGE@ ready"
