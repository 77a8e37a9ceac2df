#!/bin/sh
# A plain startup hook: run it where a non-zero exit stops the boot (an
# instance user-data script under `set -e`, a container entrypoint, a
# deploy tool's pre-traffic hook). It exits with lockstep's code:
#   0 admitted; 1 refused (a mismatch); 3 refused (could not verify);
#   2 usage error. Anything but 0 must keep the instance out of service.
#
# Configuration comes from the environment (LOCKSTEP_MANIFEST,
# LOCKSTEP_IMAGE, LOCKSTEP_RUNNING, LOCKSTEP_PROBE, LOCKSTEP_KEY, ...) or
# from $LOCKSTEP_ENV_FILE (/etc/lockstep/admit.env); extra arguments are
# passed to `lockstep admit`. The JSON decision is kept in
# $LOCKSTEP_REPORT (/run/lockstep/admit.json).
#
# With LOCKSTEP_VERSION (v1.2.3) set and no binary at $LOCKSTEP_BIN
# (/usr/local/bin/lockstep), it first installs that release for this
# machine's architecture with lockstep-install.sh (beside this script),
# checked against checksums.txt (pin LOCKSTEP_CHECKSUMS_SHA256 too). With
# LOCKSTEP_SHA256 set, the binary's SHA-256 must match it before it runs
# (exit 3 otherwise).
set -eu
env_file=${LOCKSTEP_ENV_FILE:-/etc/lockstep/admit.env}
if [ -r "$env_file" ]; then
	set -a
	. "$env_file"
	set +a
fi
report=${LOCKSTEP_REPORT:-/run/lockstep/admit.json}
mkdir -p "$(dirname "$report")"
bin=${LOCKSTEP_BIN:-/usr/local/bin/lockstep}
if [ -n "${LOCKSTEP_VERSION:-}" ] && [ ! -x "$bin" ]; then
	sh "$(dirname "$0")/lockstep-install.sh" "$LOCKSTEP_VERSION" "$(dirname "$bin")" || exit
	[ "$(basename "$bin")" = lockstep ] || mv -f "$(dirname "$bin")/lockstep" "$bin"
fi
if [ -n "${LOCKSTEP_SHA256:-}" ]; then
	got=$( (sha256sum "$bin" 2>/dev/null || shasum -a 256 "$bin") | cut -d' ' -f1)
	if [ "$got" != "$LOCKSTEP_SHA256" ]; then
		echo "lockstep-admit: $bin has SHA-256 $got, want LOCKSTEP_SHA256=$LOCKSTEP_SHA256: not running it" >&2
		exit 3
	fi
fi
exec "$bin" admit --timeout "${LOCKSTEP_TIMEOUT:-60s}" --report "$report" "$@"
