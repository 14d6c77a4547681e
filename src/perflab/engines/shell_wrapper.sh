#!/bin/sh
# perflab's job wrapper (the job-submission table's row 2 "shell wrapper"): like radical.saga's
# shell_wrapper.sh, it keeps each job's state on disk and starts a monitor per job.
#
#   stdin:  "RUN <seq> <command>" lines
#   stdout: "S <seq> <pid>" once the job runs and its pid and state are on disk,
#           "D <seq> <exit code>" when it has finished and its state says so.
#
# The wrapper waits for each monitor to report the job's pid (through a fifo in the job's directory) before it
# reads the next request, so submission is synchronous here, as in radical.saga's.
BASE=$1
mkdir -p "$BASE" || exit 1

while IFS= read -r line; do
  case "$line" in
    "RUN "*)
      rest=${line#RUN }
      seq=${rest%% *}
      cmd=${rest#* }
      dir="$BASE/$seq"
      mkdir -p "$dir"
      printf 'NEW\n' > "$dir/state"
      mkfifo "$dir/started"
      (
        # the monitor: starts the job, records its pid and state, waits, records the end
        sh -c "$cmd" < /dev/null > "$dir/out" 2> "$dir/err" &
        rpid=$!
        printf '%s\n' "$rpid" > "$dir/pid"
        printf 'RUNNING\n' >> "$dir/state"
        printf '%s\n' "$rpid" > "$dir/started"
        wait "$rpid"
        rc=$?
        printf '%s\n' "$rc" > "$dir/exit"
        if [ "$rc" -eq 0 ]; then printf 'DONE\n' >> "$dir/state"
        else printf 'FAILED\n' >> "$dir/state"; fi
        printf 'D %s %s\n' "$seq" "$rc"
      ) &
      read -r pid < "$dir/started"
      printf 'S %s %s\n' "$seq" "$pid"
      ;;
    "EXIT") exit 0 ;;
  esac
done
