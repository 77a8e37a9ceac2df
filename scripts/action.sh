#!/usr/bin/env bash
# The logic of lockstep's GitHub Action (action.yml): install lockstep
# (with install-only "true", only that: the binary's directory on
# $GITHUB_PATH for the job's later steps, outputs path and version), then
# record the release manifest (pinning its images, optionally checking
# every asset on the CDN and signing it), optionally check that it can
# follow a previous one, optionally publish it to a store with a rising
# generation, and report to GitHub:
#   - outputs manifest=PATH, digest=sha256:…, signature=PATH (when signed)
#     and generation=N in $GITHUB_OUTPUT;
#   - a markdown job summary in $GITHUB_STEP_SUMMARY;
#   - an ::error annotation on any refusal or failure, exiting with
#     lockstep's exit code (1 refused, 2 invalid input, 3 could not verify),
#     carrying lockstep's (or the install's) own message with the CLI's
#     flags named as the Action's inputs (--sign-key is sign-key,
#     --image is images).
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

# The CLI's flags that are this Action's inputs, by the input's name
# (--image is images, --keyless sign-keyless; the rest by the same name).
# A message about one names the input the user set, not a flag they never
# typed.
inputs_named() {
  sed -E \
    -e 's/--image([^-a-z]|$)/images\1/g' \
    -e 's/--keyless([^-a-z]|$)/sign-keyless\1/g' \
    -e 's/--(release|generation|assets|asset-list|exclude|cdn|origin|expires-in|output|previous|allow-moved-tag|check-cdn|sign-key|embed-signatures|image-key|certificate-identity|certificate-oidc-issuer|store|allow-unsigned|channel)([^-a-z]|$)/\1\2/g'
}

failed() { # CODE TITLE: fail with lockstep's message in $tmp/err
  local msg
  msg=$(grep '^lockstep: ' "$tmp/err" | sed 's/^lockstep: //')
  fail "$1" "$2" "$(printf '%s\n' "${msg:-$(cat "$tmp/err")}" | inputs_named)"
}

lines() { # the non-empty lines of $1, trimmed
  printf '%s\n' "$1" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d'
}

: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set: run this from action.yml}"
release=${INPUT_RELEASE:-}
generation=${INPUT_GENERATION:-}
output=${INPUT_OUTPUT:-lockstep-manifest.json}
case "${INPUT_INSTALL_ONLY:-false}" in
true) install_only=1 ;;
false) install_only=0 ;;
*) fail 2 "lockstep" "install-only ${INPUT_INSTALL_ONLY}: want true or false" ;;
esac
if [ "$install_only" = 0 ]; then
  [ -n "$release" ] || fail 2 "lockstep record" "the release input is required (or set install-only: true to install lockstep only)"
  [ -n "$generation" ] || fail 2 "lockstep record" "the generation input is required (or set install-only: true to install lockstep only)"
fi

# The signing key: a file path or KMS URI; env://VAR, the PEM in that
# environment variable (as cosign reads it); or the PEM itself (a secret
# passed as the input). A PEM is written to a private temporary file.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sign_key=${INPUT_SIGN_KEY:-}
if [[ "$sign_key" == env://* ]]; then
  var=${sign_key#env://}
  [[ "$var" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && [ -n "${!var:-}" ] ||
    fail 2 "lockstep record" "sign-key $sign_key: the environment variable $var is not set"
  sign_key=${!var}
fi
case "$sign_key" in
-----BEGIN*)
  (umask 077 && printf '%s\n' "$sign_key" >"$tmp/sign.key") || fail 3 "lockstep record" "cannot write the signing key to a temporary file"
  sign_key="$tmp/sign.key"
  ;;
esac
[ -n "$sign_key" ] && [ "${INPUT_SIGN_KEYLESS:-false}" = true ] && fail 2 "lockstep record" "sign-key and sign-keyless are exclusive"
[ -n "${INPUT_SIGN_KEY_PASSWORD:-}" ] && export COSIGN_PASSWORD="$INPUT_SIGN_KEY_PASSWORD"
case "$generation" in
auto) [ -n "${INPUT_STORE:-}" ] || fail 2 "lockstep record" "generation: auto needs the store input (the generation comes from its channel)" ;;
esac
channel=${INPUT_CHANNEL:-production}

# Install: the binary given, or scripts/action-install.sh's (a released
# version, verified and cached, or the action's own checkout).
# The install's own annotations (a signature it could not verify, a
# tampered tool cache) are printed whatever its outcome.
# A failed install's annotation is the install's own last word ("lockstep
# install: ..."), as the log shows it.
lockstep=${LOCKSTEP_BIN:-}
installed_version=${LOCKSTEP_BIN:+unknown}
if [ -z "$lockstep" ]; then
  : >"$tmp/install-notes"
  lockstep=$(ACTION_ANNOTATIONS="$tmp/install-notes" ACTION_INSTALLED_VERSION="$tmp/installed-version" \
    "$(dirname "$0")/action-install.sh" 2>"$tmp/install-err")
  rc=$?
  cat "$tmp/install-err" >&2
  cat "$tmp/install-notes"
  if [ "$rc" -ne 0 ]; then
    msg=$(grep '^lockstep install: ' "$tmp/install-err" | tail -n1 | sed 's/^lockstep install: //')
    [ -n "$msg" ] || msg="installing lockstep ${INPUT_VERSION:-} failed (exit $rc): see the log of this step"
    fail "$rc" "lockstep install" "$msg"
  fi
  installed_version=$(cat "$tmp/installed-version" 2>/dev/null || echo unknown)
fi
unset GITHUB_TOKEN # only the install reads it (the releases API)
if [ "$install_only" = 1 ]; then
  # As setup-* actions do: the binary's directory on the PATH of the job's
  # later steps (not of this one), outputs path and version.
  : "${GITHUB_PATH:?GITHUB_PATH is not set: run this from action.yml}"
  dirname "$lockstep" >>"$GITHUB_PATH"
  {
    echo "path=$lockstep"
    echo "version=$installed_version"
  } >>"$GITHUB_OUTPUT"
  printf '### lockstep %s installed\n\n`%s`, on the `PATH` of the later steps.\n' "$installed_version" "$lockstep" | summary
  echo "lockstep: installed $installed_version at $lockstep, on the PATH of the job's later steps" >&2
  exit 0
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
[ "${INPUT_CHECK_CDN:-false}" = true ] && args+=(--check-cdn)
[ -n "${INPUT_STORE:-}" ] && args+=(--store "$INPUT_STORE" --channel "$channel")
[ -n "$sign_key" ] && args+=(--sign-key "$sign_key")
if [ "${INPUT_PREVIOUS:-}" = store ]; then
  # The previous release is what the store's channel names: record itself
  # refuses a moved tag (a first release has none to compare with).
  [ -n "${INPUT_STORE:-}" ] || fail 2 "lockstep record" "previous: store needs the store input"
  args+=(--previous store)
  while IFS= read -r v; do args+=(--allow-moved-tag "$v"); done < <(lines "${INPUT_ALLOW_MOVED_TAG:-}")
fi
if [ "${INPUT_EMBED_SIGNATURES:-false}" = true ]; then
  args+=(--embed-signatures)
  [ -n "${INPUT_IMAGE_KEY:-}" ] && args+=(--image-key "$INPUT_IMAGE_KEY")
  [ -n "${INPUT_CERTIFICATE_IDENTITY:-}" ] && args+=(--certificate-identity "$INPUT_CERTIFICATE_IDENTITY")
  [ -n "${INPUT_CERTIFICATE_OIDC_ISSUER:-}" ] && args+=(--certificate-oidc-issuer "$INPUT_CERTIFICATE_OIDC_ISSUER")
fi

echo "lockstep ${args[*]}" >&2
"$lockstep" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/err" >&2
if [ "$rc" -ne 0 ]; then
  failed "$rc" "lockstep record"
fi
digest=$(tr -d '[:space:]' <"$tmp/out")
if [ "${INPUT_SIGN_KEYLESS:-false}" = true ]; then
  "$lockstep" sign --keyless "$output" >"$tmp/sig" 2>"$tmp/err"
  rc=$?
  cat "$tmp/err" >&2
  if [ "$rc" -ne 0 ]; then
    failed "$rc" "lockstep sign"
  fi
  signed=$output.sig
fi
"$lockstep" manifest show --format markdown "$output" | summary

if [ -n "${INPUT_PREVIOUS:-}" ] && [ "$INPUT_PREVIOUS" != store ]; then
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

if [ -n "${INPUT_STORE:-}" ]; then
  pargs=(publish --store "$INPUT_STORE" --channel "$channel")
  [ "${INPUT_ALLOW_UNSIGNED:-false}" = true ] && pargs+=(--allow-unsigned)
  "$lockstep" "${pargs[@]}" "$output" >"$tmp/pub" 2>"$tmp/err"
  rc=$?
  cat "$tmp/err" >&2
  if [ "$rc" -ne 0 ]; then
    failed "$rc" "lockstep publish"
  fi
  # "RELEASE CHANNEL generation N DIGEST"
  read -r _ _ _ generation _ <"$tmp/pub"
  printf '\nPublished to `%s`: channel `%s` now names generation %s (`%s`).\n' "$INPUT_STORE" "$channel" "$generation" "$digest" | summary
fi

{
  echo "manifest=$output"
  echo "digest=$digest"
  [ -n "$sign_key" ] || [ -n "${signed:-}" ] && echo "signature=$output.sig"
  echo "generation=$generation"
  echo "path=$lockstep"
  echo "version=$installed_version"
} >>"$GITHUB_OUTPUT"
echo "lockstep: recorded $release generation $generation in $output ($digest)" >&2
