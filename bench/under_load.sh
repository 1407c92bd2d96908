#!/usr/bin/env bash
# Every timing-sensitive test, RUNS times (default 20), with both cores kept busy by two
# CPU burners beside pytest: the time limits must hold on a loaded machine.
#   bench/under_load.sh [RUNS]
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
python3 -c 'while True: pass' & b1=$!
python3 -c 'while True: pass' & b2=$!
trap 'kill $b1 $b2 2>/dev/null' EXIT
failed=0
for i in $(seq 1 "$runs"); do
  out=$(.venv/bin/python -m pytest -q -p no:cacheprovider \
    tests/test_referee.py tests/test_memory_sandbox.py tests/test_session.py tests/test_hostile_lines.py \
    tests/test_sandbox.py tests/test_match_lifecycle.py tests/test_dribbling.py \
    "tests/test_docker.py::test_fair_time_stops_a_container_while_others_think" \
    "tests/test_docker.py::test_ctrl_c_removes_every_container" \
    "tests/test_botcheck.py::test_slow_bot" "tests/test_cli.py::test_ctrl_c_stops_every_bot" 2>&1)
  code=$?
  echo "run $i: $(tail -1 <<<"$out")"
  if [ $code -ne 0 ]; then failed=$((failed + 1)); grep -E "^(FAILED|ERROR)" <<<"$out"; fi
done
echo "$((runs - failed)) of $runs runs passed"
[ $failed -eq 0 ]
