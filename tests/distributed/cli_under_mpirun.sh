#!/usr/bin/env bash
# The `tessera` binary under mpirun on 4 ranks: one result row from rank 0 with the grid and a
# small distributed backward error, and `tessera info` listing every rank.
#   cli_under_mpirun.sh MPIEXEC TESSERA_BINARY [MPIEXEC FLAGS...]
set -uo pipefail
mpiexec=$1
tessera=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# launch ARGS...: tessera on 4 ranks, stdout in out.txt and stderr in err.txt; sets $status.
launch() {
  "$mpiexec" -np 4 "$@" >"$work/out.txt" 2>"$work/err.txt"
}

for grid in 2x2 1x4; do
  launch "$@" "$tessera" potrf --n 211 --nb 24 --grid "$grid" --mode cpu --json
  status=$?
  [ "$status" -eq 0 ] || fail "potrf --grid $grid exited with $status: $(cat "$work/err.txt")"
  [ "$(wc -l <"$work/out.txt")" -eq 1 ] || fail "potrf --grid $grid printed $(wc -l <"$work/out.txt") lines: $(cat "$work/out.txt")"
  python3 - "$work/out.txt" "$grid" <<'PY' || fail "potrf --grid $grid row: $(cat "$work/out.txt")"
import json, sys
row = json.loads(open(sys.argv[1]).read())
assert row["grid"] == sys.argv[2] and row["ranks"] == 4 and row["n"] == 211 and row["nb"] == 24, row
assert row["info"] == 0 and row["ok"] is True, row
assert row["backward_error"] is not None and row["backward_error"] < 1, row
assert row["workers"]["cpu"] == 4, row
assert 0 < row["largest_rank_bytes_sent"] < row["bytes_between_ranks"], row
PY
done

# Repetitions in the same ranks, one row each, and every rank's schedule of the last one: each of
# the 9 diagonal tiles factored on exactly one rank.
launch "$@" "$tessera" potrf --n 211 --nb 24 --grid 2x2 --mode cpu --json --repetitions 2 --trace "$work/schedule.json"
[ $? -eq 0 ] || fail "potrf --repetitions 2 --trace: $(cat "$work/err.txt")"
python3 - "$work" <<'PY' || fail "repetitions or per-rank traces: $(cat "$work/out.txt"; ls "$work")"
import json, pathlib, sys
work = pathlib.Path(sys.argv[1])
rows = [json.loads(line) for line in (work / "out.txt").read_text().splitlines()]
assert [r["repetition"] for r in rows] == [1, 2] and all(r["ok"] for r in rows), rows
potrf_tasks = 0
for rank in range(4):
    trace = json.loads((work / f"schedule.rank{rank}.json").read_text())
    tasks = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert tasks, f"rank {rank} recorded no task"
    potrf_tasks += sum(1 for e in tasks if e["name"] == "potrf")
    sends = [t for t in trace["otherData"]["transfers"] if t["from"] == f"rank {rank}"]
    assert sends and all(t["to"].startswith("rank ") and t["to"] != f"rank {rank}" and t["bytes"] > 0 for t in sends), sends
assert potrf_tasks == 9, potrf_tasks
assert not (work / "schedule.json").exists()
PY

launch "$@" "$tessera" potrf --n 100 --nb 16 --grid 2x2 --mode cpu --uplo U --precision s
[ $? -eq 0 ] || fail "potrf --grid 2x2 --uplo U --precision s: $(cat "$work/err.txt")"
[ "$(wc -l <"$work/out.txt")" -eq 2 ] || fail "the table is a header and one row: $(cat "$work/out.txt")"
grep -qE '^ +100 +16 +s +cpu +2x2 .* ok$' "$work/out.txt" || fail "unexpected row: $(cat "$work/out.txt")"

launch "$@" "$tessera" potrf --n 100 --grid 3x2
[ $? -ne 0 ] || fail "a 3 x 2 grid on 4 ranks was accepted"
grep -qF "process grid needs 6 ranks, the communicator has 4" "$work/err.txt" || fail "no grid message: $(cat "$work/err.txt")"

launch "$@" "$tessera" info
[ $? -eq 0 ] || fail "info exited with an error: $(cat "$work/err.txt")"
for rank in 0 1 2 3; do
  grep -qE "^rank $rank on .*: 1 CPU, 0 CUDA worker" "$work/out.txt" || fail "info lacks rank $rank: $(cat "$work/out.txt")"
done
echo "ok"
