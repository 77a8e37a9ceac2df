#!/bin/sh
set -e
# After installing or upgrading lockstep's package: make systemd see the
# units. Nothing is enabled: the gate needs /etc/lockstep/admit.env first.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload || true
fi
