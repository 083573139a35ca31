#!/usr/bin/env bash
# Runs the built `tessera` binary and checks exit statuses, messages and files.
#   cli_test.sh TESSERA_BINARY CASE [ADDRESS_SPACE_KIB]
# Each CASE is one CTest test (tests/cli/CMakeLists.txt). ADDRESS_SPACE_KIB (default 4 GiB) bounds
# the runs that must refuse a matrix before allocating it; "none" leaves it unbounded (a sanitized
# binary reserves terabytes of address space for its shadow memory).
set -uo pipefail
tessera=$1
case_name=$2
address_space_kib=${3:-4194304}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# run ARGS...: runs tessera with stdout in out.txt and stderr in err.txt; sets $status.
run() {
  "$tessera" "$@" >out.txt 2>err.txt
  status=$?
}

# expect STATUS ARGS...: runs tessera and checks its exit status.
expect() {
  local want=$1
  shift
  run "$@"
  [ "$status" -eq "$want" ] || fail "tessera $* exited with $status, expected $want; stderr: $(cat err.txt)"
}

# stderr_is TEXT: stderr is exactly this one line.
stderr_is() {
  [ "$(cat err.txt)" = "$1" ] || fail "stderr is '$(cat err.txt)', expected '$1'"
}

stderr_has() {
  grep -qF -- "$1" err.txt || fail "stderr lacks '$1': $(cat err.txt)"
}

mtx() { printf '%s\n' "$@" >"$file"; }

# Every parse error exits 1 with one line; help and version exit 0.
parse_errors_exit_1() {
  expect 1 potrf --bogus
  stderr_is "tessera: The following argument was not expected: --bogus"
  expect 1
  stderr_is "tessera: A subcommand is required"
  expect 1 potrf --n -5
  stderr_is "tessera: --n: -5 is not a non-negative integer"
  expect 1 potrf --n abc
  stderr_is "tessera: --n: abc is not a non-negative integer"
  expect 1 potrf --n 3000000000
  stderr_is "tessera: --n: 3000000000 is larger than 2147483647"
  expect 1 potrf --nb 0
  stderr_is "tessera: --nb: 0 is not a positive integer"
  expect 1 potrf --uplo X
  expect 1 potrf --seed -1
  stderr_is "tessera: --seed: -1 is not a non-negative integer"
  expect 1 potrf --n
  expect 1 batched --count -1
  stderr_is "tessera: --count: -1 is not a non-negative integer"
  expect 1 batched --n -5
  stderr_is "tessera: --n: -5 is not a non-negative integer"
  expect 1 batched --ncpu -2
  expect 1 batched --unknown 3
  expect 1 info --ncuda x
  expect 1 info --explain -1
  stderr_is "tessera: --explain: -1 is not a non-negative integer"
  expect 1 info --explain 100 --nb 2.5
  stderr_is "tessera: --nb: 2.5 is not a non-negative integer"
  expect 1 tune --repetitions 0
  expect 1 tune --ops lu
  stderr_has "--ops: lu not in {potf2,trsm,syrk,gemm}"
  # Lists as the user guide writes them: parsed, then refused for the device (a build without
  # CUDA, no GPU, or no device 99).
  expect 1 tune --nb 64,128 --precision d,s --ops potf2,gemm --device 99 --output tuning.json
  grep -qxE "tessera: (this Tessera was built without CUDA: nothing to tune|tuning needs a GPU; none is present|no CUDA device 99)" err.txt ||
    fail "stderr: $(cat err.txt)"
  for args in "potrf --bogus" "" "batched --n -5" "potrf --nb 0"; do
    # shellcheck disable=SC2086
    run $args
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "tessera $args: more than one line on stderr: $(cat err.txt)"
  done
  expect 0 --help
  expect 0 --version
  grep -q '^tessera ' out.txt || fail "--version printed $(cat out.txt)"
  expect 0 potrf --help
  expect 0 batched --help
}

# --input gives the order (and the matrix): --n or --seed with it is refused, not ignored.
input_excludes_n_and_seed() {
  local file=spd.mtx
  mtx "%%MatrixMarket matrix array real symmetric" "2 2" "4" "1" "3"
  expect 1 potrf --input spd.mtx --n 5
  grep -qxE "tessera: (--n excludes --input|--input excludes --n)" err.txt || fail "stderr: $(cat err.txt)"
  expect 1 potrf --input spd.mtx --seed 3
  grep -qxE "tessera: (--seed excludes --input|--input excludes --seed)" err.txt || fail "stderr: $(cat err.txt)"
  expect 0 potrf --input spd.mtx --ncpu 1
}

# Every option of potrf and batched says its default in --help.
defaults_in_help() {
  local command option text
  for command in potrf batched; do
    "$tessera" $command --help >help.txt || fail "$command --help"
    # One block per option: its line and the wrapped description under it.
    awk '/^  -/{if (block) print block; block=$0; next} /^   /{block=block" "$0} END{print block}' help.txt >options.txt
    while read -r option text; do
      case "$option" in -h,--help | --json | --no-check* | --fast-math | --oversubscribe | --input* | --output* | --trace* | --tile-map*) continue ;; esac
      echo "$option $text" | grep -qE '=[^ ]|default' || fail "$command $option: no default in --help: $option $text"
    done <options.txt
  done
}

# More CPU workers than CPUs are capped with a warning, unless --oversubscribe.
ncpu_capped_at_cpus() {
  local cpus
  cpus=$(nproc)
  expect 0 potrf --n 64 --no-check --json --ncpu 1000 --mode cpu
  stderr_has "tessera: warning: --ncpu 1000 asks for more CPU workers than the $cpus CPUs available; starting $cpus"
  grep -qF "\"workers\":{\"cpu\":$cpus," out.txt || fail "workers not capped at $cpus: $(cat out.txt)"
  expect 0 potrf --n 64 --no-check --json --ncpu $((cpus + 1)) --oversubscribe --mode cpu
  grep -qF "\"workers\":{\"cpu\":$((cpus + 1))," out.txt || fail "--oversubscribe did not start $((cpus + 1)) workers: $(cat out.txt)"
  grep -q warning err.txt && fail "warning despite --oversubscribe: $(cat err.txt)"
  TESSERA_NCPU=1000 run batched --n 4 --count 10 --json --mode cpu
  [ "$status" -eq 0 ] || fail "batched exited with $status: $(cat err.txt)"
  stderr_has "tessera: warning: TESSERA_NCPU=1000 asks for more CPU workers"
}

# With the CPU workers left to Tessera, a machine with GPUs keeps one core for the calling thread
# besides one per CUDA worker; cpu mode, and a machine without a GPU, keep one only from 16 cores.
a_core_left_for_the_caller_with_gpus() {
  local cores cpu_mode_workers cpu cuda
  cores=$(nproc)
  workers() { sed -n 's/.*"workers":{"cpu":\([0-9]*\),"cuda":\([0-9]*\)}.*/\1 \2/p' out.txt; }
  expect 0 potrf --n 64 --no-check --json --mode cpu
  read -r cpu_mode_workers _ <<<"$(workers)"
  expect 0 potrf --n 64 --no-check --json
  read -r cpu cuda <<<"$(workers)"
  [ -n "$cpu_mode_workers" ] && [ -n "$cpu" ] && [ -n "$cuda" ] || fail "no worker counts in $(cat out.txt)"
  local expected=$cores
  [ "$cores" -ge 16 ] && expected=$((cores - 1))
  [ "$cpu_mode_workers" -eq "$expected" ] || fail "cpu mode started $cpu_mode_workers CPU workers on $cores cores, expected $expected"
  if [ "$cuda" -eq 0 ]; then
    [ "$cpu" -eq "$expected" ] || fail "no GPU, yet $cpu CPU workers on $cores cores, expected $expected"
  elif [ "$cores" -ge $((cuda + 2)) ]; then
    [ $((cpu + cuda + 1)) -eq "$cores" ] || fail "$cpu CPU and $cuda CUDA workers on $cores cores: expected one core left"
  fi
}

# StarPU counts and binds the node's cores whatever CPUs the process may run on: under taskset
# Tessera starts one CPU worker per CPU the process is allowed, bound there.
workers_stay_within_the_affinity_mask() {
  command -v taskset >/dev/null || fail "taskset (util-linux) is missing"
  local cpus last
  cpus=$(nproc)
  [ "$cpus" -ge 2 ] || { echo "one CPU: nothing to leave out"; return; }
  last=$(taskset -pc $$ | sed 's/.*[,-]\([0-9]*\)$/\1/; s/.*: *//')
  taskset -c "$last" "$tessera" potrf --n 300 --json --mode cpu >out.txt 2>err.txt ||
    fail "run on CPU $last failed: $(cat err.txt)"
  grep -qF '"workers":{"cpu":1,' out.txt || fail "on CPU $last alone: $(cat out.txt)"
}

# --output and --trace are checked before the factorization: exit 1 at once (factoring and
# checking n = 10000 takes tens of seconds on a few cores), no result row.
output_paths_checked_before_factoring() {
  mkdir existing_directory directory.json
  local args
  for args in "--output missing_directory/L.mtx" "--output existing_directory" "--trace missing_directory/t.json" \
    "--trace directory.json"; do
    # shellcheck disable=SC2086
    timeout 10 "$tessera" potrf --n 10000 --mode cpu $args >out.txt 2>err.txt
    status=$?
    [ "$status" -eq 1 ] || fail "potrf $args exited with $status (124: still running after 10 s)"
    [ ! -s out.txt ] || fail "potrf $args factored before refusing the path: $(cat out.txt)"
    stderr_has "tessera: ${args%% *} "
  done
  stderr_is "tessera: --trace directory.json: is a directory"
  run potrf --n 10000 --mode cpu --output missing_directory/L.mtx
  stderr_is "tessera: --output missing_directory/L.mtx: no directory missing_directory"
  run potrf --n 10000 --mode cpu --output existing_directory
  stderr_is "tessera: --output existing_directory: is a directory"
  [ ! -e L.mtx ] || fail "a file was created"
  expect 0 potrf --n 20 --output L.mtx --trace t.json
  [ -s L.mtx ] && [ -s t.json ] || fail "--output or --trace not written"
}

# --input is checked before the runtime starts (which it does before reading the file): a missing
# file or a directory is refused with one line naming the option, and nothing is factored.
input_path_checked_before_starting() {
  mkdir a_directory
  expect 1 potrf --input missing.mtx --mode cpu
  stderr_is "tessera: --input missing.mtx: No such file or directory"
  [ ! -s out.txt ] || fail "a row was printed: $(cat out.txt)"
  expect 1 potrf --input a_directory --mode cpu
  stderr_is "tessera: --input a_directory: is a directory"
  local file=A.mtx
  mtx "%%MatrixMarket matrix array real symmetric" "2 2" 4 1 3
  expect 0 potrf --input A.mtx --mode cpu --json
  grep -q '"info":0' out.txt || fail "the readable file was not factored: $(cat out.txt)"
}

# The progress line (with carriage returns) only goes to a terminal.
progress_only_on_a_terminal() {
  expect 0 potrf --n 6000 --no-check --ncpu 1 --mode cpu
  if grep -q $'\r' err.txt; then fail "carriage returns in a file: $(od -c err.txt | head -n 3)"; fi
  [ ! -s err.txt ] || fail "stderr not empty: $(cat err.txt)"
  # On a terminal (a pseudo-terminal from script(1)) it still shows, when the run lasts long
  # enough for one (seconds: the 7th column of the result row).
  if command -v script >/dev/null; then
    script -qec "'$tessera' potrf --n 6000 --no-check --ncpu 1 --mode cpu" /dev/null >tty.txt
    local seconds
    seconds=$(awk '$1 == "6000" { print int($7) }' tty.txt)
    if [ "${seconds:-0}" -ge 2 ]; then
      grep -q 'factoring n = 6000' tty.txt || fail "no progress line on a terminal: $(cat tty.txt)"
    fi
  fi
}

# The factor is written as a general matrix, zeros above the diagonal, that multiplies back to A.
factor_written_as_general_lower_triangular() {
  local file=spd.mtx uplo
  mtx "%%MatrixMarket matrix array real symmetric" "4 4" "4" "1" "0.5" "0" "5" "1" "0.25" "6" "2" "7"
  for uplo in L U; do
    expect 0 potrf --input spd.mtx --uplo $uplo --output L.mtx
    [ "$(head -n 1 L.mtx)" = "%%MatrixMarket matrix array real general" ] || fail "header: $(head -n 1 L.mtx)"
    [ "$(sed -n 2p L.mtx)" = "4 4" ] || fail "size line: $(sed -n 2p L.mtx)"
    [ "$(tail -n +3 L.mtx | wc -l)" -eq 16 ] || fail "not 16 values"
    # Column-major values: L(i,j) above the diagonal must be 0, and L L^T must be A.
    tail -n +3 L.mtx | awk -v a="4 1 0.5 0 1 5 1 0.25 0.5 1 6 2 0 0.25 2 7" '
      { L[(NR - 1) % 4, int((NR - 1) / 4)] = $1 + 0 }
      END {
        split(a, A, " ")
        for (i = 0; i < 4; i++)
          for (j = 0; j < 4; j++) {
            if (j > i && L[i, j] != 0) { print "L(" i + 1 "," j + 1 ") = " L[i, j] " above the diagonal"; exit 1 }
            s = 0
            for (k = 0; k < 4; k++) s += L[i, k] * L[j, k]
            d = s - A[1 + i + 4 * j]
            if (d > 1e-12 || d < -1e-12) { print "(L L^T)(" i + 1 "," j + 1 ") = " s ", A = " A[1 + i + 4 * j]; exit 1 }
          }
      }' || fail "uplo $uplo: the file does not hold L"
  done
}

# A general file is factored only if exactly symmetric: otherwise --uplo would pick the matrix.
general_input_must_be_symmetric() {
  local file=asymmetric.mtx uplo
  mtx "%%MatrixMarket matrix array real general" "3 3" "4" "1" "0" "1" "4" "1" "0" "1.0000000000000002" "4"
  for uplo in L U; do
    expect 1 potrf --input asymmetric.mtx --uplo $uplo
    stderr_is "tessera: asymmetric.mtx: the matrix is not symmetric: entry (3, 2) is 1 but entry (2, 3) is 1.0000000000000002; potrf reads one triangle, so a general file must hold a symmetric matrix"
    [ ! -s out.txt ] || fail "factored anyway: $(cat out.txt)"
  done
  file=coordinate.mtx
  mtx "%%MatrixMarket matrix coordinate real general" "2 2 3" "1 1 4" "2 1 1" "2 2 4"
  expect 1 potrf --input coordinate.mtx
  stderr_has "entry (2, 1) is 1 but entry (1, 2) is 0"
  file=symmetric_general.mtx
  mtx "%%MatrixMarket matrix coordinate real general" "2 2 4" "1 1 4" "2 1 1" "1 2 1" "2 2 4"
  expect 0 potrf --input symmetric_general.mtx --uplo U
}

# Duplicate coordinate entries sum (general and symmetric files).
duplicate_entries_summed() {
  local file=duplicates.mtx
  # Summed: [4 1.5; 1.5 4], L = [2 0; 0.75 sqrt(3.4375)]. Keeping the last value would give
  # [0.5 0.5; 0.5 4].
  mtx "%%MatrixMarket matrix coordinate real symmetric" "2 2 5" "1 1 3.5" "2 1 1" "2 2 4" "1 1 0.5" "2 1 0.5"
  expect 0 potrf --input duplicates.mtx --output L.mtx
  [ "$(sed -n 3p L.mtx)" = "2" ] && [ "$(sed -n 4p L.mtx)" = "0.75" ] || fail "L = $(tail -n +3 L.mtx | tr '\n' ' ')"
  file=general_duplicates.mtx
  mtx "%%MatrixMarket matrix coordinate real general" "2 2 6" "1 1 2" "1 1 2" "2 1 1" "1 2 1" "2 2 1" "2 2 3"
  expect 0 potrf --input general_duplicates.mtx --output L.mtx
  [ "$(sed -n 3p L.mtx)" = "2" ] && [ "$(sed -n 4p L.mtx)" = "0.5" ] || fail "L = $(tail -n +3 L.mtx | tr '\n' ' ')"
}

# run_bounded ARGS...: tessera in a bounded address space for at most 20 s; sets $status.
run_bounded() {
  (
    [ "$address_space_kib" = none ] || ulimit -v "$address_space_kib"
    timeout 20 "$tessera" "$@" >out.txt 2>err.txt
  )
  status=$?
}

# info reports OpenBLAS's kernel and what would be faster. A run whose CPU tasks call BLAS never
# keeps a kernel that leaves the CPU's vector units unused (the command starts again with
# OPENBLAS_CORETYPE set), and a kernel the user chose is kept.
# --accuracy: the adaptive factorization, its tiles per arithmetic in the row and in --tile-map's
# image, the check held to the accuracy; refused outside (0, 1), in single precision and beside
# --grid.
accuracy_reports_the_tiles() {
  expect 0 potrf --n 1500 --nb 100 --accuracy 1e-6 --mode cpu --json
  python3 -c "
import json, sys
row = json.load(open('out.txt'))
t = row['tiles']
sys.exit(0 if row['ok'] and row['accuracy'] == 1e-6 and t['fp16'] + t['fp32'] > 0 and sum(t.values()) == 15 * 14 // 2 else 1)" ||
    fail "the row does not give 105 tiles, some reduced: $(cat out.txt)"
  expect 0 potrf --n 1500 --nb 100 --accuracy 1e-6 --mode cpu
  grep -q "^accuracy 1e-06: tiles below the diagonal in fp16 [0-9]*, fp32 [0-9]*, fp64 [0-9]*$" out.txt ||
    fail "no line of tiles: $(cat out.txt)"
  expect 0 potrf --n 1500 --nb 100 --accuracy 1e-6 --mode cpu --json --tile-map map.svg
  python3 -c "
import json, re, sys
t = json.load(open('out.txt'))['tiles']
svg = open('map.svg').read()
tiles = re.findall(r'<title>tile \((\d+), (\d+)\): (fp\d\d)</title>', svg)
below = [a for i, j, a in tiles if int(i) > int(j)]
ok = len(tiles) == 120 and all(below.count(a) == t[a] for a in t) and all(a == 'fp64' for i, j, a in tiles if i == j)
sys.exit(0 if ok and svg.startswith('<svg') else 1)" || fail "map.svg does not draw the row's tiles: $(head -c 300 map.svg)"
  expect 1 potrf --n 100 --tile-map map.svg
  stderr_has "--tile-map requires --accuracy"
  expect 1 potrf --n 100 --accuracy 1e-4 --tile-map /nonexistent/map.svg
  stderr_has "--tile-map /nonexistent/map.svg"
  expect 1 potrf --n 100 --accuracy 1
  stderr_is "tessera: --accuracy: 1 is not in (0, 1)"
  expect 1 potrf --n 100 --accuracy nan
  stderr_is "tessera: --accuracy: nan is not in (0, 1)"
  expect 1 potrf --n 100 --accuracy 1e-4 --precision s
  stderr_is "tessera: --accuracy: adaptive precision factors double-precision matrices (--precision d)"
  expect 1 potrf --accuracy 1e-4 --grid 1x1
  stderr_has "excludes"
}

blas_kernel_reported() {
  blas_field() { python3 -c "import json, sys; print(json.load(open('out.txt'))['blas']['$1'])"; }
  expect 0 info --json
  [ -n "$(blas_field library)" ] || return 0  # a BLAS other than OpenBLAS: nothing to report
  expect 0 potrf --n 64 --mode cpu --json
  local used
  used=$(python3 -c "import json; print(json.load(open('out.txt'))['blas_kernel'])")
  [ -n "$used" ] || fail "potrf --json names no BLAS kernel: $(cat out.txt)"
  OPENBLAS_CORETYPE=$used run info --json
  [ "$(blas_field kernel)" = "$used" ] || fail "OPENBLAS_CORETYPE=$used not honoured: $(cat out.txt)"
  [ -z "$(blas_field faster_kernel)" ] || fail "cpu mode ran OpenBLAS's $used kernel: $(cat out.txt)"
  OPENBLAS_CORETYPE=Prescott run potrf --n 64 --mode cpu --json
  [ "$(python3 -c "import json; print(json.load(open('out.txt'))['blas_kernel'])")" = Prescott ] ||
    fail "the user's kernel was not kept: $(cat out.txt)"
  local vector_units=no
  grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && vector_units=yes
  OPENBLAS_CORETYPE=Prescott run info --json
  [ "$(blas_field kernel_from_environment)" = Prescott ] || fail "OPENBLAS_CORETYPE not reported: $(cat out.txt)"
  if [ $vector_units = yes ]; then
    [ -n "$(blas_field faster_kernel)" ] || fail "no faster kernel named on a CPU with AVX2: $(cat out.txt)"
    OPENBLAS_CORETYPE=Prescott run info
    grep -qF "set OPENBLAS_CORETYPE=" out.txt || fail "info does not say how to choose the kernel: $(cat out.txt)"
  fi
}

# info says what is true of a machine without a GPU (not CUDA's error from the stub driver).
info_says_when_there_is_no_gpu() {
  ls /dev/nvidia[0-9]* >/dev/null 2>&1 && return 0  # a machine with NVIDIA devices: nothing to check
  expect 0 info
  grep -qE "no GPU|built without CUDA" out.txt || fail "info on a machine without a GPU: $(cat out.txt)"
  grep -qi "driver version is insufficient" out.txt && fail "info blames the driver: $(cat out.txt)"
  expect 0 info --json
  python3 -c "import json; s = json.load(open('out.txt'))['cuda_status']; assert s.startswith('no GPU') or s == 'built without CUDA', s" ||
    fail "cuda_status: $(cat out.txt)"
}

# --gpu-placement takes block-cyclic or policy (and overrides TESSERA_GPU_PLACEMENT); info reports it.
gpu_placement_chosen_and_reported() {
  expect 0 info --json --gpu-placement policy
  grep -qF '"gpu_placement": "policy"' out.txt || fail "info --gpu-placement policy: $(cat out.txt)"
  TESSERA_GPU_PLACEMENT=policy run info --json
  grep -qF '"gpu_placement": "policy"' out.txt || fail "TESSERA_GPU_PLACEMENT=policy: $(cat out.txt)"
  TESSERA_GPU_PLACEMENT=policy run info --json --gpu-placement block-cyclic
  grep -qF '"gpu_placement": "block-cyclic"' out.txt || fail "--gpu-placement over the environment: $(cat out.txt)"
  expect 0 potrf --n 64 --json --gpu-placement block-cyclic --mode cpu
  expect 1 potrf --n 64 --gpu-placement rows
  stderr_has "--gpu-placement: rows not in {block-cyclic,policy}"
  TESSERA_GPU_PLACEMENT=rows run potrf --n 64
  [ "$status" -ne 0 ] || fail "TESSERA_GPU_PLACEMENT=rows accepted"
  stderr_has "unknown GPU placement 'rows' (expected block-cyclic or policy)"
}

# --objective takes time or energy (and overrides TESSERA_OBJECTIVE); info reports it. Without a
# GPU the energy objective changes nothing: auto runs cpu mode, on as many CPU workers.
objective_chosen_and_reported() {
  expect 0 info --json
  grep -qF '"objective": "time"' out.txt || fail "info's default objective: $(cat out.txt)"
  local workers
  workers=$(python3 -c "import json; print(json.load(open('out.txt'))['workers']['cpu'])")
  TESSERA_OBJECTIVE=energy run info --json
  grep -qF '"objective": "energy"' out.txt || fail "TESSERA_OBJECTIVE=energy: $(cat out.txt)"
  if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    python3 -c "import json, sys; i = json.load(open('out.txt')); assert i['auto_mode']['mode'] == 'cpu' and i['workers']['cpu'] == int(sys.argv[1]), i" "$workers" ||
      fail "energy objective without a GPU: $(cat out.txt)"
  fi
  TESSERA_OBJECTIVE=energy run info --json --objective time
  grep -qF '"objective": "time"' out.txt || fail "--objective over the environment: $(cat out.txt)"
  expect 0 potrf --n 64 --objective energy
  expect 1 potrf --n 64 --objective power
  stderr_has "--objective: power not in {time,energy}"
  TESSERA_OBJECTIVE=power run potrf --n 64
  [ "$status" -ne 0 ] || fail "TESSERA_OBJECTIVE=power accepted"
  stderr_has "unknown objective 'power' (expected time or energy)"
}

# A matrix the machine cannot hold is refused before it is allocated: at once, in little memory.
oversized_matrix_refused_before_allocating() {
  local memory_kib n
  memory_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
  # 40000 (12.8 GB per copy) as reported on a 24 GB machine; larger where the machine is.
  n=$(awk -v kib="$memory_kib" 'BEGIN { n = int(sqrt(kib * 1024 / 8)) + 1; print (n > 40000 ? n : 40000) }')
  printf '%%%%MatrixMarket matrix coordinate real general\n%s %s 1\n1 1 1\n' "$n" "$n" >huge.mtx
  # In 4 GiB of address space (by default): enough to start, far too little for the matrix.
  run_bounded potrf --input huge.mtx
  [ "$status" -eq 1 ] || fail "huge file: exit $status: $(cat err.txt)"
  grep -qE "^tessera: huge.mtx: potrf of order $n in double precision needs [0-9.]+ GiB \(.*\), more than this machine's [0-9.]+ GiB of memory$" err.txt ||
    fail "huge file: $(cat err.txt)"
  run_bounded potrf --n $((2 * n)) --no-check --precision s
  [ "$status" -eq 1 ] || fail "--n $((2 * n)): exit $status: $(cat err.txt)"
  stderr_has "tessera: potrf of order $((2 * n)) in single precision needs"
  run_bounded batched --n 1000 --count 1000000
  [ "$status" -eq 1 ] || fail "batched: exit $status: $(cat err.txt)"
  stderr_has "tessera: batched: 1000000 matrices of order 1000 in double precision needs"
}

# Output that cannot be written is an error: every command's stdout on a full device, --help and
# --version included, and the files of --output and --trace.
output_write_errors_exit_1() {
  [ -w /dev/full ] || { echo "no /dev/full: skipped"; return 0; }
  local args
  for args in "potrf --n 200 --mode cpu --json" "potrf --n 200 --mode cpu" "batched --n 4 --count 10 --mode cpu" \
    "batched --n 4 --count 10 --mode cpu --json" "info" "info --json" "policies" "policies --json" "--version" \
    "--help" "potrf --help"; do
    # shellcheck disable=SC2086
    "$tessera" $args >/dev/full 2>err.txt
    status=$?
    [ "$status" -eq 1 ] || fail "tessera $args >/dev/full exited with $status, expected 1"
    stderr_is "tessera: cannot write the output: No space left on device"
  done
  expect 1 potrf --n 20 --mode cpu --output /dev/full
  stderr_is "tessera: error while writing '/dev/full': No space left on device"
  [ ! -s out.txt ] || fail "a result row despite the lost --output: $(cat out.txt)"
  ln -s /dev/full trace.json
  expect 1 potrf --n 20 --mode cpu --trace trace.json
  stderr_is "tessera: could not write the trace file 'trace.json': No space left on device"
  # A pipe whose reader is gone: with SIGPIPE ignored the write fails with EPIPE (exit 1, one
  # line); by default the signal ends the process, as for any Unix filter.
  local sigpipe
  for sigpipe in ignore default; do
    python3 - "$sigpipe" "$tessera" potrf --n 50 --mode cpu >status.txt 2>err.txt <<'PYTHON'
import os, signal, subprocess, sys
read_end, write_end = os.pipe()
os.close(read_end)
handler = signal.SIG_IGN if sys.argv[1] == "ignore" else signal.SIG_DFL
run = subprocess.run(sys.argv[2:], stdout=write_end, stderr=subprocess.PIPE, restore_signals=False,
                     preexec_fn=lambda: signal.signal(signal.SIGPIPE, handler))
sys.stderr.buffer.write(run.stderr)
print(run.returncode)
PYTHON
    if [ "$sigpipe" = ignore ]; then
      [ "$(cat status.txt)" = 1 ] || fail "closed pipe, SIGPIPE ignored: exit $(cat status.txt)"
      stderr_is "tessera: cannot write the output: Broken pipe"
    else
      [ "$(cat status.txt)" = -13 ] || fail "closed pipe: exit $(cat status.txt), expected death by SIGPIPE"
    fi
  done
  # Written output still exits 0.
  expect 0 potrf --n 20 --mode cpu --output L.mtx --json
  [ -s L.mtx ] && grep -q '"ok":true' out.txt || fail "output not written"
}

# The check passes below LAPACK's test-suite threshold (30 n eps), as the library's tests do:
# rounding alone exceeds 1 on tiny systems.
backward_error_threshold_is_lapacks() {
  expect 0 batched --n 2 --count 1000 --nrhs 1 --mode cpu --json
  python3 -c "import json, sys; e = json.load(open('out.txt'))['max_backward_error']; sys.exit(0 if 1 < e < 30 else 1)" ||
    fail "the case no longer has a backward error between 1 and 30: $(cat out.txt)"
  local file=two.mtx
  mtx "%%MatrixMarket matrix array real symmetric" "1 1" "2"
  expect 0 potrf --input two.mtx --mode cpu --json
  grep -q '"backward_error":1.0,' out.txt || fail "sqrt(2)^2 no longer 1 eps from 2: $(cat out.txt)"
  local command
  for command in potrf batched; do
    "$tessera" $command --help | tr '\n' ' ' | grep -q "not below 30 (LAPACK's test-suite threshold)" ||
      fail "$command --help does not give the threshold"
  done
}

# An input line without an end is refused after the format's 1024 characters, not read into
# memory: /dev/zero, a 2 GB file of one line (sparse: no disk), a file with CR line ends.
input_lines_bounded() {
  local start
  start=$(date +%s)
  run_bounded potrf --input /dev/zero --mode cpu
  [ "$status" -eq 1 ] || fail "/dev/zero: exit $status (124: still reading after 20 s)"
  stderr_is "tessera: /dev/zero: Matrix Market line 1: longer than 1024 characters (the format's limit)"
  truncate -s 2G one_line.mtx
  run_bounded potrf --input one_line.mtx --mode cpu
  [ "$status" -eq 1 ] || fail "2 GB line: exit $status: $(cat err.txt)"
  stderr_is "tessera: one_line.mtx: Matrix Market line 1: longer than 1024 characters (the format's limit)"
  [ $(($(date +%s) - start)) -le 10 ] || fail "refusing took $(($(date +%s) - start)) s"
  printf '%%%%MatrixMarket matrix array real symmetric\r1 1\r4\r' >cr.mtx
  expect 1 potrf --input cr.mtx --mode cpu
  stderr_is "tessera: cr.mtx: Matrix Market line 1: a carriage return not followed by a line feed (lines end in LF or CR LF)"
  : >empty.mtx
  expect 1 potrf --input empty.mtx --mode cpu
  stderr_is "tessera: empty.mtx: Matrix Market line 1: empty input"
}

# An integer file holds integers: 1.5 is refused, naming the line; signs and leading zeros read.
integer_input_holds_integers() {
  local file=fraction.mtx
  mtx "%%MatrixMarket matrix coordinate integer symmetric" "2 2 2" "1 1 4" "2 2 1.5"
  expect 1 potrf --input fraction.mtx --mode cpu
  stderr_is "tessera: fraction.mtx: Matrix Market line 4: '1.5' is not an integer (the file's field is integer)"
  [ ! -s out.txt ] || fail "factored anyway: $(cat out.txt)"
  file=integers.mtx
  mtx "%%MatrixMarket matrix coordinate integer symmetric" "2 2 3" "1 1 +4" "2 1 -2" "2 2 0005"
  expect 0 potrf --input integers.mtx --mode cpu --output L.mtx
  # [4 -2; -2 5] = L L^T with L = [2 0; -1 2].
  [ "$(tail -n +3 L.mtx | tr '\n' ' ')" = "2 -1 0 2 " ] || fail "L = $(tail -n +3 L.mtx | tr '\n' ' ')"
}

# A NaN or an infinity in the input: LAPACK's info (+inf on the diagonal has a square root and
# fails nowhere; a failing pivot before a NaN is where it fails), and the message says the matrix
# holds one (exit 3 with no line for +inf; "the leading minor holds a NaN" for a minor before it).
non_finite_input_said() {
  local file=inf.mtx
  mtx "%%MatrixMarket matrix array real symmetric" "3 3" "1" "0" "0" "inf" "0" "1"
  expect 3 potrf --input inf.mtx --mode cpu
  stderr_is "tessera: the backward error nan is not below 30 (the matrix holds a NaN or an infinity)"
  file=nan.mtx
  mtx "%%MatrixMarket matrix array real symmetric" "3 3" "1" "0" "0" "-1" "nan" "1"
  expect 2 potrf --input nan.mtx --mode cpu --json
  stderr_is "tessera: the matrix is not positive definite: its leading minor of order 2 is the first that is not (the matrix holds a NaN or an infinity)"
  grep -q '"info":2' out.txt || fail "info is not 2: $(cat out.txt)"
}

# StarPU aborted the process (SIGABRT) where it could not make its calibration directory: a
# clear error, exit 1.
unusable_calibration_directory_refused() {
  env -u STARPU_PERF_MODEL_DIR -u XDG_CACHE_HOME -u STARPU_HOME HOME=/dev/null \
    "$tessera" potrf --n 200 --mode cpu >out.txt 2>err.txt
  status=$?
  [ "$status" -eq 1 ] || fail "HOME=/dev/null: exit $status, expected 1; stderr: $(cat err.txt)"
  stderr_is "tessera: StarPU cannot keep its calibration in /dev/null/.starpu/sampling: /dev/null exists and is not a directory; set STARPU_PERF_MODEL_DIR to a writable directory"
  STARPU_PERF_MODEL_DIR="$(printf 'd%.0s' $(seq 1 250))" "$tessera" potrf --n 20 --mode cpu >out.txt 2>err.txt
  status=$?
  [ "$status" -eq 1 ] || fail "a calibration path too long for StarPU: exit $status, expected 1"
  stderr_has "the path is too long for StarPU"
}

# Under small stack and address-space limits the workers had too little: a SIGSEGV in OpenBLAS
# (ulimit -s 256), a hang in its buffer allocation (ulimit -v).
resource_limits_never_crash_or_hang() {
  # A sanitized binary needs its own stack and address-space room: nothing to learn there.
  [ "$address_space_kib" = none ] && { echo "sanitized build: skipped"; return 0; }
  (ulimit -s 256 && exec "$tessera" potrf --n 600 --mode cpu >out.txt 2>err.txt)
  status=$?
  [ "$status" -eq 0 ] || fail "ulimit -s 256: exit $status; stderr: $(cat err.txt)"
  # The libraries take most of this: no room for any worker's buffer, an error at once.
  (ulimit -v 1500000 && exec timeout 60 "$tessera" potrf --n 200 --mode cpu >out.txt 2>err.txt)
  status=$?
  [ "$status" -ne 124 ] || fail "ulimit -v 1500000: hung"
  if [ "$status" -ne 0 ]; then
    [ "$status" -eq 1 ] || fail "ulimit -v 1500000: exit $status; stderr: $(cat err.txt)"
    stderr_has "address-space limit"
  fi
}

# An empty path is refused, not read as the option's absence (a random matrix factored instead
# of the file, no factor or trace written).
empty_paths_refused() {
  expect 1 potrf --mode cpu --input ""
  stderr_is "tessera: --input: an empty path names no file"
  local option
  for option in --output --trace; do
    expect 1 potrf --n 4 --mode cpu $option ""
    stderr_is "tessera: $option: an empty path names no file"
  done
}

# A finite value beyond single precision's range is refused by name, not factored as infinity.
single_precision_range_checked() {
  local file=large.mtx
  mtx "%%MatrixMarket matrix array real symmetric" "2 2" "1e300" "0" "1"
  expect 1 potrf --input large.mtx --precision s --mode cpu
  stderr_is "tessera: large.mtx: entry (1, 1) is 1e+300, beyond single precision's range (--precision d reads it)"
  expect 0 potrf --input large.mtx --precision d --mode cpu
}

"$case_name"
echo "passed: $case_name"
