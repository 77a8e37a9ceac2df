#!/usr/bin/env bash
# The logic of lockstep's GitHub Action (action.yml): install lockstep,
# record the release manifest, optionally check that it can follow a
# previous one, and report to GitHub:
#   - outputs manifest=PATH and digest=sha256:… in $GITHUB_OUTPUT;
#   - a markdown job summary in $GITHUB_STEP_SUMMARY;
#   - an ::error annotation on any refusal or failure, exiting with
#     lockstep's exit code (1 refused, 2 invalid input, 3 could not verify).
# Inputs come as INPUT_* variables (action.yml maps them); multi-value
# inputs are one value a line. LOCKSTEP_BIN, if set, is the binary to use.
set -uo pipefail

annotate() { # LEVEL TITLE MESSAGE: a workflow command, escaped
  local msg=$3
  msg=${msg//'%'/'%25'}
  msg=${msg//$'\r'/'%0D'}
  msg=${msg//$'\n'/'%0A'}
  echo "::$1 title=$2::$msg"
}

summary() { # append markdown to the job summary, if there is one
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat >>"$GITHUB_STEP_SUMMARY"; else cat >/dev/null; fi
}

fail() { # CODE TITLE MESSAGE
  annotate error "$2" "$3"
  printf '### %s failed (exit %s)\n\n```\n%s\n```\n' "$2" "$1" "$3" | summary
  exit "$1"
}

lines() { # the non-empty lines of $1, trimmed
  printf '%s\n' "$1" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d'
}

: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set: run this from action.yml}"
release=${INPUT_RELEASE:-}
generation=${INPUT_GENERATION:-}
output=${INPUT_OUTPUT:-lockstep-manifest.json}
[ -n "$release" ] || fail 2 "lockstep record" "the release input is required"
[ -n "$generation" ] || fail 2 "lockstep record" "the generation input is required"

# Install: the binary given, the action's own checkout, or a released version.
lockstep=${LOCKSTEP_BIN:-}
if [ -z "$lockstep" ]; then
  version=${INPUT_VERSION:-local}
  bindir="${RUNNER_TEMP:-$(mktemp -d)}/lockstep-bin"
  mkdir -p "$bindir"
  if [ "$version" = local ]; then
    src=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
    (cd "$src" && go build -trimpath -o "$bindir/lockstep" ./cmd/lockstep) ||
      fail 3 "lockstep install" "go build of lockstep in $src failed"
  else
    GOBIN="$bindir" go install "github.com/lockstep-dev/lockstep/cmd/lockstep@$version" ||
      fail 3 "lockstep install" "go install lockstep@$version failed"
  fi
  lockstep="$bindir/lockstep"
fi

mkdir -p "$(dirname "$output")" || fail 2 "lockstep record" "cannot create the directory of $output"
args=(record --release "$release" --generation "$generation" --output "$output")
while IFS= read -r v; do args+=(--image "$v"); done < <(lines "${INPUT_IMAGES:-}")
[ -n "${INPUT_ASSETS:-}" ] && args+=(--assets "$INPUT_ASSETS")
while IFS= read -r v; do args+=(--asset-list "$v"); done < <(lines "${INPUT_ASSET_LIST:-}")
while IFS= read -r v; do args+=(--exclude "$v"); done < <(lines "${INPUT_EXCLUDE:-}")
while IFS= read -r v; do args+=(--cdn "$v"); done < <(lines "${INPUT_CDN:-}")
[ -n "${INPUT_ORIGIN:-}" ] && args+=(--origin "$INPUT_ORIGIN")
[ -n "${INPUT_EXPIRES_IN:-}" ] && args+=(--expires-in "$INPUT_EXPIRES_IN")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "lockstep ${args[*]}" >&2
"$lockstep" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/err" >&2
if [ "$rc" -ne 0 ]; then
  msg=$(grep '^lockstep: ' "$tmp/err" | sed 's/^lockstep: //')
  fail "$rc" "lockstep record" "${msg:-$(cat "$tmp/err")}"
fi
digest=$(tr -d '[:space:]' <"$tmp/out")
"$lockstep" manifest show --format markdown "$output" | summary

if [ -n "${INPUT_PREVIOUS:-}" ]; then
  dargs=(manifest diff --format markdown)
  while IFS= read -r v; do dargs+=(--allow-moved-tag "$v"); done < <(lines "${INPUT_ALLOW_MOVED_TAG:-}")
  "$lockstep" "${dargs[@]}" "$INPUT_PREVIOUS" "$output" >"$tmp/diff" 2>"$tmp/err"
  rc=$?
  cat "$tmp/err" >&2
  { echo; cat "$tmp/diff"; } | summary
  if [ "$rc" -ne 0 ]; then
    msg=$(grep '^lockstep: ' "$tmp/err" | sed 's/^lockstep: //')
    annotate error "lockstep manifest diff" "${msg:-$(cat "$tmp/err")}"
    exit "$rc"
  fi
fi

{
  echo "manifest=$output"
  echo "digest=$digest"
} >>"$GITHUB_OUTPUT"
echo "lockstep: recorded $release generation $generation in $output ($digest)" >&2
