#!/usr/bin/env bash
# Starts (or stops) a single-node Ceph radosgw on 127.0.0.1 for the S3
# integration tests: one monitor, one memstore OSD (no disk), auth off, and
# a user with access key RGWAK and secret RGWSECRET. Ready in about 11 s.
# tcp_nodelay=1: without it every GET waits ~40 ms (Nagle against delayed ACK).
#   scripts/radosgw.sh start DIR
#   scripts/radosgw.sh stop DIR
# The ports are free ones chosen at start (RGW_PORT and RGW_MON_PORT fix
# them); start writes them to DIR/env as RGW_PORT, RGW_MON_PORT and
# LOCKSTEP_TEST_S3_ENDPOINT, for `. DIR/env`. A start that fails (a port
# taken meanwhile, a monitor slow to form a quorum, an OSD that does not
# register) is tried again from scratch, on other ports, up to 3 times;
# the last failure prints the tail of every daemon's log and what to do.
set -euo pipefail
cmd=${1:?usage: radosgw.sh start|stop DIR}
D=${2:-/tmp/lockstep-rgw}
case "$cmd" in
stop)
  # By pid file, and every daemon that runs in $D whether or not it wrote
  # its pid file yet: a daemon left from a failed start keeps calling its
  # monitor's port, and a later cluster there hears 'wrong fsid'.
  for p in "$D"/run/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
  real=$(cd "$D" 2>/dev/null && pwd -P || echo "$D")
  daemons() { for n in ceph-mon ceph-osd radosgw; do pgrep -x "$n" || true; done; }
  for pid in $(daemons); do
    [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$real" ] && kill "$pid" 2>/dev/null || true
  done
  for _ in $(seq 1 50); do
    left=
    for pid in $(daemons); do
      [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$real" ] && left=1
    done
    [ -z "$left" ] && break
    sleep 0.1
  done
  exit 0 ;;
start) ;;
*) echo "usage: radosgw.sh start|stop DIR" >&2; exit 2 ;;
esac

# free_port prints a loopback port nothing listens on.
. "$(dirname "${BASH_SOURCE[0]}")/lib/ports.sh"

# step runs a command with a deadline, its output in log/steps.log.
step() {
  local secs=$1; shift
  echo "+ $*" >>"$D/log/steps.log"
  timeout "$secs" "$@" >>"$D/log/steps.log" 2>&1
}

# attempt starts the cluster once; it fails on the first step that does.
attempt() {
  "$0" stop "$D"
  rm -rf "$D"; mkdir -p "$D"/{mon/a,osd/0,run,log,rgw}; cd "$D"
  PORT=${RGW_PORT_FIXED:-$(free_port)}
  MONPORT=${RGW_MON_PORT_FIXED:-$(free_port)}
  for p in "$PORT" "$MONPORT"; do
    # A port someone listens on would make this cluster talk to theirs
    # (the monitor's 'wrong fsid').
    if [ -z "$p" ] || (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "port ${p:-?} is not free" >>"$D/log/steps.log"; return 1
    fi
  done
  FSID=$(cat /proc/sys/kernel/random/uuid)
  cat > ceph.conf <<CONF
[global]
fsid = $FSID
mon host = v1:127.0.0.1:$MONPORT
public addr = 127.0.0.1
# The OSD's cluster and heartbeat sockets follow cluster addr: without it
# they listen on every address (0.0.0.0), not loopback only.
cluster addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd crush chooseleaf type = 0
# The OSD sends no command to the monitor as it starts (its place in the
# CRUSH map and its device class): on a loaded machine such a command could
# go out before the OSD had the monitor map, with a zero fsid, and the
# monitor refused it ('wrong fsid'), failing the start. The start places
# the OSD itself (ceph osd crush add, below).
osd crush update on start = false
osd class update on start = false
osd objectstore = memstore
memstore device bytes = 536870912
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
# A test cluster keeps no data on disk (memstore): a disk under 30% free
# (Ceph's default warning) or 5% (its default stop) must not fail it.
mon data avail warn = 1
mon data avail crit = 0
run dir = $D/run
admin socket = $D/run/\$cluster-\$name.asok
log file = $D/log/\$cluster-\$name.log
pid file = $D/run/\$cluster-\$name.pid
mon data = $D/mon/\$id
osd data = $D/osd/\$id
keyring = $D/keyring
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw data = $D/rgw
CONF
  step 30 ceph-authtool --create-keyring keyring --gen-key -n mon. --cap mon 'allow *' || return 1
  step 30 monmaptool --create --add a "v1:127.0.0.1:$MONPORT" --fsid "$FSID" monmap || return 1
  step 60 ceph-mon -c ceph.conf --mkfs -i a --monmap monmap --keyring keyring || return 1
  step 30 ceph-mon -c ceph.conf -i a || return 1
  # The monitor answers once it has formed its quorum of one.
  step 60 ceph -c ceph.conf --connect-timeout 10 mon stat || return 1
  step 60 ceph -c ceph.conf --connect-timeout 10 osd create || return 1
  step 60 ceph -c ceph.conf --connect-timeout 10 osd crush add osd.0 1.0 root=default || return 1
  step 120 ceph-osd -c ceph.conf -i 0 --mkfs || return 1
  step 30 ceph-osd -c ceph.conf -i 0 || return 1
  step 30 radosgw -c ceph.conf -n client.rgw.a || return 1
  local up=
  for _ in $(seq 1 120); do
    if curl -sf -o /dev/null "http://127.0.0.1:$PORT/"; then up=1; break; fi
    sleep 0.5
  done
  [ -n "$up" ] || { echo "radosgw did not answer on 127.0.0.1:$PORT within 60 s" >>"$D/log/steps.log"; return 1; }
  # Loopback only: a daemon of this cluster listening on any other address
  # fails the start (ss lists each listening socket with its process).
  local pids wide
  pids=$(cat "$D"/run/*.pid 2>/dev/null | tr '\n' '|')
  wide=$(ss -ltnpH 2>/dev/null | grep -E "pid=(${pids%|})," | awk '$4 !~ /^(127\.0\.0\.1|\[::1\]):/ {print $4, $6}')
  if [ -z "$pids" ] || [ -n "$wide" ]; then
    echo "a daemon of this cluster listens beyond loopback (or none wrote its pid): ${wide:-no pid files}" >>"$D/log/steps.log"; return 1
  fi
  step 60 radosgw-admin -c ceph.conf user create --uid=test --display-name=test --access-key=RGWAK --secret-key=RGWSECRET || return 1
  cat > "$D/env" <<ENV
RGW_PORT=$PORT
RGW_MON_PORT=$MONPORT
LOCKSTEP_TEST_S3_ENDPOINT=http://127.0.0.1:$PORT
ENV
}

RGW_PORT_FIXED=${RGW_PORT:-}
RGW_MON_PORT_FIXED=${RGW_MON_PORT:-}
for try in 1 2 3; do
  if (attempt); then
    . "$D/env"
    echo "radosgw ready on http://127.0.0.1:$RGW_PORT (RGWAK/RGWSECRET), monitor on $RGW_MON_PORT, in $D" >&2
    exit 0
  fi
  # What failed, before the next attempt wipes its logs.
  echo "radosgw: start $try of 3 failed; trying again from scratch. Its last steps:" >&2
  tail -n 6 "$D/log/steps.log" 2>/dev/null | sed 's/^/    /' >&2
  sleep $((try * 2))
done
echo "radosgw: could not start a test cluster in $D. The last attempt's logs:" >&2
for f in "$D"/log/*.log; do
  [ -f "$f" ] || continue
  echo "--- $f (last 20 lines)" >&2
  tail -n 20 "$f" >&2
done
cat >&2 <<HELP
What to do:
  - 'wrong fsid', 'address already in use' or a monitor that never answers:
    another Ceph runs on the same ports; let this script choose free ones
    (unset RGW_PORT and RGW_MON_PORT) or stop the other one.
  - a missing command: run scripts/install-deps.sh (it installs radosgw).
  - to run every test but the radosgw ones: LOCKSTEP_INTEGRATION= go test ./...
  - to use an S3 you already run: set LOCKSTEP_TEST_S3_ENDPOINT (and
    LOCKSTEP_TEST_S3_ACCESS_KEY / LOCKSTEP_TEST_S3_SECRET_KEY) and run go test.
HELP
"$0" stop "$D"
exit 1
