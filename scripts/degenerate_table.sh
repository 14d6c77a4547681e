#!/bin/bash
# Issue 43's degenerate cases x verbs, on command targets (bash -c scores: cheap).
# Writes the raw output docs/degenerate.md quotes; needs one_level.txt and collinear.txt in the cwd (see there).
# Run from an empty directory; PERFLAB_HOME points inside it. `degenerate_table.sh explain`
# gathers only the explain column (scripts/degenerate_explain.py: two toy releases).
export PERFLAB_HOME=$PWD/home
P=${P:-perflab}
# score commands: PERFLAB_TREATMENTS holds the set, comma-separated
ALL_FAIL='echo nan'
BASE_FAIL='bash -c "case \$PERFLAB_TREATMENTS in \"\") echo nan;; a) echo 90;; b) echo 95;; *) echo 85;; esac"'
ONE_FAIL='bash -c "case \$PERFLAB_TREATMENTS in a) echo nan;; *) echo 100;; esac"'
CONSTANT='echo 100'
NOISY='bash -c "echo \$((100 + RANDOM % 7 - 10 * (\${#PERFLAB_TREATMENTS} > 0)))"'
case_cmd() { case $1 in all_failed) echo "$ALL_FAIL";; base_failed) echo "$BASE_FAIL";;
  one_failed) echo "$ONE_FAIL";; constant) echo "$CONSTANT";; *) echo "$NOISY";; esac; }
# the output's first lines, and the verb's own exit code (not head's)
show() { eval "$1" > .out 2>&1; rc=$?; ${2:-head -14} .out; echo "[exit $rc]"; }
CASES="all_failed base_failed one_failed constant one_level collinear one_run"
[ "$1" = explain ] && CASES=
for c in $CASES; do
  cmd=$(case_cmd $c)
  design="--design full --runs 2"; factors=a,b
  [ $c = one_run ] && design="--design full --runs 1"
  [ $c = one_level ] && design="--design explicit --design-opt file=$PWD/one_level.txt --runs 2"
  [ $c = collinear ] && design="--design explicit --design-opt file=$PWD/collinear.txt --runs 2"
  echo "=== $c: campaign create $c --command '$cmd' --factors $factors $design"
  eval $P campaign create $c --command "'$cmd'" --factors $factors $design >/dev/null
  $P campaign run $c >/dev/null 2>&1
  echo "--- analyze $c"; show "$P analyze $c"
  echo "--- report $c"; show "$P report $c" "head -6"
  case $c in one_level|collinear|one_run) continue;; esac  # a design's case: tune and compare plan their own runs
  echo "--- tune"; show "$P tune t_$c --command '$cmd' --factors $factors --budget 40" "tail -12"
  echo "--- compare"; show "$P compare --command '$cmd' --treat-b a --runs 6" "tail -4"
done
# explain: releases 1.0 -> 2.0 of a toy package, scored by their simulated time (exact but
# for one_run's noise); the cases' nan rules are in degenerate_explain.py. One level only and
# the collinear pair are designs: explain plans its own sets (a Plackett-Burman screen).
${PY:-python3} "$(dirname "$0")/degenerate_explain.py" .
for c in ${EXPLAIN_CASES-all_failed base_failed one_failed constant one_run}; do
  score=$c; runs=
  # explain refuses --runs 1 (at least 3 rounds): one run per set is the screen's, once
  [ $c = one_run ] && score=noisy && runs="--runs 3 --screen-runs 1"
  echo "=== explain $c"
  show "PIP_FIND_LINKS=$PWD/wheels $P explain --package plx_explain_toy --from 1.0 --to 2.0 \
    --command 'python $PWD/score.py $score' --config-class plx_explain_toy.core:Worker \
    --name ex_$c $runs" "tail -16"
done
