#!/usr/bin/env bash
# One part of a sweep on one machine: start a vLLM server on this machine's loopback (when a model is
# named), wait until it answers, run part I of N of the sweep into a store of its own, stop the server.
#
#   scripts/sweep_part.sh CONFIG.toml I/N OUTDIR [MODEL]
#
# CONFIG's model points at the server each machine runs for itself, the same address on every machine
# (provider = "openai-compatible", base_url = "http://127.0.0.1:8000/v1"): the address is part of every
# trial's key, so the parts' keys are the whole sweep's. The part goes to OUTDIR/part-I-of-N.sqlite;
# `litm import OUTDIR/part-*-of-N.sqlite --db WHOLE.sqlite` merges the parts (docs/sweeps.md).
# Without MODEL (and without $VLLM_MODEL) no server is started: the config's server is used as it is.
# Settings: LITM (the litm command, default: litm), VLLM (default: vllm), VLLM_PORT (default 8000),
# VLLM_ARGS (more arguments for vllm serve, e.g. "--tensor-parallel-size 8"), SERVER_WAIT (seconds to
# wait for the server to answer, default 1800: a large model loads for minutes).
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 CONFIG.toml I/N OUTDIR [MODEL]" >&2
  exit 2
fi
config=$1 part=$2 out=$3 model=${4:-${VLLM_MODEL:-}}
litm=${LITM:-litm} vllm=${VLLM:-vllm} port=${VLLM_PORT:-8000} wait_s=${SERVER_WAIT:-1800}
mkdir -p "$out"
db="$out/part-${part%/*}-of-${part#*/}.sqlite"
server=""
stop() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; }
trap stop EXIT
if [ -n "$model" ]; then
  # shellcheck disable=SC2086  # VLLM_ARGS is a list of arguments
  "$vllm" serve "$model" --host 127.0.0.1 --port "$port" ${VLLM_ARGS:-} > "$out/server-${part%/*}.log" 2>&1 &
  server=$!
  t0=$(date +%s)
  until curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null; do
    if ! kill -0 "$server" 2>/dev/null; then
      echo "the model server stopped before it answered; its log: $out/server-${part%/*}.log" >&2
      tail -n 20 "$out/server-${part%/*}.log" >&2
      exit 1
    fi
    if [ $(( $(date +%s) - t0 )) -ge "$wait_s" ]; then
      echo "the model server did not answer within $wait_s s; its log: $out/server-${part%/*}.log" >&2
      exit 1
    fi
    sleep 2
  done
  echo "the model server answers on 127.0.0.1:$port after $(( $(date +%s) - t0 )) s"
fi
"$litm" sweep "$config" --shard "$part" --db "$db" --quiet
