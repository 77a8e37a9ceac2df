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
set -eu
env_file=${LOCKSTEP_ENV_FILE:-/etc/lockstep/admit.env}
if [ -r "$env_file" ]; then
	set -a
	. "$env_file"
	set +a
fi
report=${LOCKSTEP_REPORT:-/run/lockstep/admit.json}
mkdir -p "$(dirname "$report")"
exec "${LOCKSTEP_BIN:-/usr/local/bin/lockstep}" admit --timeout "${LOCKSTEP_TIMEOUT:-60s}" --report "$report" "$@"
