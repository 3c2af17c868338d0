# Sourced by action.yml's steps: words STRING INPUT splits STRING as a shell splits words,
# quotes and backslashes honoured and nothing expanded (xargs, no eval), into the array
# WORDS: --filter 'fix (docs|go)' stays one argument. An unmatched quote stops the step.
words() {
  local parsed w
  parsed=$(mktemp)
  if ! printf '%s' "$1" | xargs -r printf '%s\0' > "$parsed"; then
    echo "::error::runner action: the $2 input has an unmatched quote"
    rm -f "$parsed"
    exit 2
  fi
  WORDS=()
  while IFS= read -r -d '' w; do WORDS+=("$w"); done < "$parsed"
  rm -f "$parsed"
}
