#!/bin/sh
# A complete external agent for runner in one shell script: curl + jq against runner's
# model endpoint (OpenAI chat completions), run as
#
#   agent: {command: "sh /path/to/curl-agent.sh"}     # in a task file, or
#   runner run --agent command ...                     # with the task's command
#
# runner starts it in the scenario's workspace and sandbox with:
#   RUNNER_PROMPT (also on stdin)  the task's prompt
#   RUNNER_MODEL                   the run's --model, as the endpoint serves it
#   OPENAI_BASE_URL                runner's endpoint, ending in /v1 (ANTHROPIC_BASE_URL too)
#   OPENAI_API_KEY                 a per-run token for it (never a provider's key)
# and judges the workspace it leaves. Exit 0 says "finished", anything else "gave up".
#
# The agent offers the model four tools (write_file, read_file, run_in_terminal and
# task_complete), runs each call the model makes and sends back its result, until the
# model calls task_complete or answers without a call.
set -eu

api="${OPENAI_BASE_URL:?runner sets OPENAI_BASE_URL}/chat/completions"
tools='[
 {"type":"function","function":{"name":"write_file","description":"Write a file (path relative to the working directory).",
  "parameters":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}}},
 {"type":"function","function":{"name":"read_file","description":"Read a file.",
  "parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
 {"type":"function","function":{"name":"run_in_terminal","description":"Run a shell command; returns its output and exit code.",
  "parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}},
 {"type":"function","function":{"name":"task_complete","description":"Say the task is done.",
  "parameters":{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}}}
]'
# What real agents put in their system prompt: the working directory and a session id.
# runner shows the model the workspace as /workspace and masks ids and dates in a
# cassette's key, so a recorded run replays in another workspace and session.
session=$(cat /proc/sys/kernel/random/uuid 2>/dev/null || echo none)
msgs=$(jq -n --arg p "${RUNNER_PROMPT:?runner sets RUNNER_PROMPT}" --arg cwd "$PWD" --arg s "$session" '[
  {role: "system", content: ("You work in " + $cwd + " (session " + $s + "). Use the tools; call task_complete when done.")},
  {role: "user", content: $p}]')

while :; do
  body=$(jq -n --arg m "${RUNNER_MODEL:-default}" --argjson msgs "$msgs" --argjson tools "$tools" \
    '{model: $m, messages: $msgs, tools: $tools}')
  # --fail-with-body: a refused request (past max_steps) ends the agent with the reason.
  if ! resp=$(printf '%s' "$body" | curl -sS --fail-with-body -H "Authorization: Bearer $OPENAI_API_KEY" \
      -H 'Content-Type: application/json' --data-binary @- "$api"); then
    echo "curl-agent: the model request failed: $resp" >&2
    exit 2
  fi
  msg=$(printf '%s' "$resp" | jq -c '.choices[0].message | {role, content, tool_calls}')
  msgs=$(printf '%s' "$msgs" | jq -c --argjson m "$msg" '. + [$m]')
  n=$(printf '%s' "$msg" | jq '.tool_calls // [] | length')
  if [ "$n" -eq 0 ]; then
    printf '%s\n' "$msg" | jq -r '.content // ""'
    exit 0 # the model answered without a call: it has nothing more to do
  fi
  i=0
  while [ "$i" -lt "$n" ]; do
    call=$(printf '%s' "$msg" | jq -c ".tool_calls[$i]")
    id=$(printf '%s' "$call" | jq -r .id)
    name=$(printf '%s' "$call" | jq -r .function.name)
    args=$(printf '%s' "$call" | jq -r .function.arguments)
    arg() { printf '%s' "$args" | jq -r --arg k "$1" '.[$k] // ""'; }
    case "$name" in
    write_file)
      path=$(arg path)
      mkdir -p "$(dirname "$path")"
      printf '%s' "$args" | jq -j '.content' >"$path"
      out="wrote $path" ;;
    read_file)
      out=$(cat "$(arg path)" 2>&1) || true ;;
    run_in_terminal)
      code=0
      out=$(sh -c "$(arg command)" 2>&1) || code=$?
      out="$out
[exit code $code]" ;;
    task_complete)
      arg summary
      exit 0 ;;
    *)
      out="unknown tool $name" ;;
    esac
    msgs=$(printf '%s' "$msgs" | jq -c --arg id "$id" --arg out "$out" '. + [{role: "tool", tool_call_id: $id, content: $out}]')
    i=$((i + 1))
  done
done
