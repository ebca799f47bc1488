#!/usr/bin/env bash
# Whole-command task-graph benchmark: the path a user runs, on two inputs.
#
# 1. Our synthetic DSH session (crates/taskgraph/src/synth.rs, 100,000 events by default),
#    written as a v0 `session.jsonl.zstd` folder and as a plain `session.v1.jsonl` folder.
# 2. The reference input of issue 26: the session `../shared/tools/gen_dsh_session.py --events
#    <events> --seed 1` writes (at 100,000 events 35.6 MB of JSON Lines in 201 zstd frames;
#    the JavaScript reference took 4.9 s and 388 MiB on it). Generated into a temporary folder
#    (never into the repo) with the first Python that imports `zstandard` (python3, then
#    .venv/bin/python); without one, or without ../shared/tools, it prints `skipped: <why>`.
#
# Builds the release binary, then runs on each input
#   mindgate taskgraph <folder> --json > /dev/null     (decode + parse + build + critical path + JSON out)
#   mindgate taskgraph <folder>        > /dev/null     (the readable summary)
# several times each under /usr/bin/time -v, printing wall time, CPU time (user + sys: what
# the command costs when other processes compete for the cores) and peak RSS of every run,
# and the best of each.
#
# Usage: scripts/bench-taskgraph.sh [events (100000)] [runs (5)]
# Environment: MINDGATE_BIN=path skips the release build and times that binary instead.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-100000}
runs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -x /usr/bin/time ]; then
  echo "bench-taskgraph: /usr/bin/time is missing (apt-get install time)" >&2
  exit 1
fi
cargo build --release -q -p mindgate-taskgraph --example synth_session
if [ -z "${MINDGATE_BIN:-}" ]; then
  cargo build --release -q -p mindgate-cli
  MINDGATE_BIN=target/release/mindgate
fi
target/release/examples/synth_session "$work/zstd/synthetic" "$events" >/dev/null
target/release/examples/synth_session "$work/plain/synthetic" "$events" --plain >/dev/null

# The reference input, when its generator and a Python with zstandard are at hand.
reference=""
generator=../shared/tools/gen_dsh_session.py
if [ ! -f "$generator" ]; then
  echo "skipped: reference input ($generator is absent)"
else
  python=""
  for p in python3 .venv/bin/python; do
    if command -v "$p" >/dev/null && "$p" -c 'import zstandard' 2>/dev/null; then
      python=$p
      break
    fi
  done
  if [ -z "$python" ]; then
    echo "skipped: reference input (no Python with zstandard: pip install zstandard)"
  else
    "$python" "$generator" --events "$events" --seed 1 --out "$work/ref/reference" >/dev/null
    # Only the session file: the folder is a DSH v0 session folder.
    rm -f "$work/ref/reference/events.json" "$work/ref/reference/manifest.json"
    reference="$work/ref/reference"
  fi
fi

# A stable clock: the session must not look live (modified within 180 s) to the reader.
touch -d '2020-01-01 00:00:00' "$work"/zstd/synthetic/* "$work"/plain/synthetic/*
if [ -n "$reference" ]; then touch -d '2020-01-01 00:00:00' "$reference"/*; fi

measure() { # label, then the command
  local label=$1 best_s="" best_cpu="" best_kb="" i out s cpu kb
  shift
  for ((i = 1; i <= runs; i++)); do
    /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null 2>/dev/null || true
    out=$(cat "$work/time.txt")
    s=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); t = 0; for (k = 1; k <= n; k++) t = t * 60 + p[k]; print t }' <<<"$out")
    cpu=$(awk -F': ' '/User time|System time/ { t += $2 } END { print t }' <<<"$out")
    kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' <<<"$out")
    printf '  %-20s run %d: wall %6.3f s  cpu %6.3f s  peak RSS %7.1f MB\n' "$label" "$i" "$s" "$cpu" "$(awk "BEGIN { print $kb / 1024 }")"
    if [ -z "$best_s" ] || awk "BEGIN { exit !($s < $best_s) }"; then best_s=$s; fi
    if [ -z "$best_cpu" ] || awk "BEGIN { exit !($cpu < $best_cpu) }"; then best_cpu=$cpu; fi
    if [ -z "$best_kb" ] || [ "$kb" -lt "$best_kb" ]; then best_kb=$kb; fi
  done
  printf '%-22s best wall %6.3f s, best cpu (user+sys) %6.3f s, peak RSS %.1f MB\n' "$label" "$best_s" "$best_cpu" "$(awk "BEGIN { print $best_kb / 1024 }")"
}

export DSH_HOME="$work/none" PI_CODING_AGENT_DIR="$work/none" CLAUDE_CONFIG_DIR="$work/none" CODEX_HOME="$work/none"
echo "mindgate taskgraph, synthetic DSH session of $events events ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
measure "zstd --json" "$MINDGATE_BIN" taskgraph "$work/zstd/synthetic" --json
measure "zstd summary" "$MINDGATE_BIN" taskgraph "$work/zstd/synthetic"
measure "plain v1 --json" "$MINDGATE_BIN" taskgraph "$work/plain/synthetic" --json
measure "plain v1 summary" "$MINDGATE_BIN" taskgraph "$work/plain/synthetic"
if [ -n "$reference" ]; then
  echo "mindgate taskgraph, reference session of gen_dsh_session.py --events $events --seed 1 ($(du -b "$reference/session.jsonl.zstd" | cut -f1) B zstd)"
  measure "reference --json" "$MINDGATE_BIN" taskgraph "$reference" --json
  measure "reference summary" "$MINDGATE_BIN" taskgraph "$reference"
fi
