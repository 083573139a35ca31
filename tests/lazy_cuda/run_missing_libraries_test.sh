#!/usr/bin/env bash
# The lazy forwarders where the real CUDA libraries cannot be found: the folder holding them is
# hidden behind an empty one in a mount namespace of this process alone (unshare), and no
# LD_LIBRARY_PATH leads elsewhere. Exits 77 (skipped) where a mount namespace cannot be made.
#   run_missing_libraries_test.sh FORWARDING_PROGRAM REAL_LIBRARY_FOLDER
set -uo pipefail
program=$1 real=$(readlink -f "$2")
empty=$(mktemp -d)
trap 'rmdir "$empty"' EXIT
if ! unshare --mount true 2>/dev/null; then
  echo "SKIPPED: no mount namespace can be made here (unshare --mount needs root or user namespaces)"
  exit 77
fi
env -u LD_LIBRARY_PATH unshare --mount sh -c 'mount --bind "$1" "$2" && exec "$3" --missing' sh "$empty" "$real" "$program"
