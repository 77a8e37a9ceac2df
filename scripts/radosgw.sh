#!/usr/bin/env bash
# Starts (or stops) a single-node Ceph radosgw on 127.0.0.1:7480 for the S3
# integration tests: one monitor, one memstore OSD (no disk), auth off, and
# a user with access key RGWAK and secret RGWSECRET. Ready in about 11 s.
# tcp_nodelay=1: without it every GET waits ~40 ms (Nagle against delayed ACK).
#   scripts/radosgw.sh start DIR
#   scripts/radosgw.sh stop DIR
set -euo pipefail
cmd=${1:?usage: radosgw.sh start|stop DIR}
D=${2:-/tmp/lockstep-rgw}
PORT=${RGW_PORT:-7480}
MONPORT=${RGW_MON_PORT:-6789}
case "$cmd" in
stop)
  for p in "$D"/run/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
  exit 0 ;;
start) ;;
*) echo "usage: radosgw.sh start|stop DIR" >&2; exit 2 ;;
esac
"$0" stop "$D"
rm -rf "$D"; mkdir -p "$D"/{mon/a,osd/0,run,log,rgw}; cd "$D"
FSID=$(cat /proc/sys/kernel/random/uuid)
cat > ceph.conf <<CONF
[global]
fsid = $FSID
mon host = v1:127.0.0.1:$MONPORT
public addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 536870912
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
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
ceph-authtool --create-keyring keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
monmaptool --create --add a "v1:127.0.0.1:$MONPORT" --fsid "$FSID" monmap >/dev/null
ceph-mon -c ceph.conf --mkfs -i a --monmap monmap --keyring keyring
ceph-mon -c ceph.conf -i a
timeout 30 ceph -c ceph.conf osd create >/dev/null
ceph-osd -c ceph.conf -i 0 --mkfs 2>/dev/null
ceph-osd -c ceph.conf -i 0 2>/dev/null
radosgw -c ceph.conf -n client.rgw.a
for _ in $(seq 1 120); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.5; done
timeout 30 radosgw-admin -c ceph.conf user create --uid=test --display-name=test --access-key=RGWAK --secret-key=RGWSECRET >/dev/null
echo "radosgw ready on http://127.0.0.1:$PORT (RGWAK/RGWSECRET)" >&2
