#!/usr/bin/env bash
# The boot gate's Docker section (README "Gate an instance that runs
# Docker", docs/boot-gate.md), done as a user does it, on an instance that
# boots with systemd:
#
#   1. CI's side: a registry (Debian's docker-registry), a CDN (nginx), an
#      app image (a static file server and its build), `lockstep keygen`,
#      `record --check-cdn --sign-key`, `publish` to a file store.
#   2. An instance: a container whose PID 1 is systemd (Debian bookworm from
#      debootstrap, kept per machine), on a real dockerd (Debian's
#      docker.io, started here), with that daemon's socket as its
#      /var/run/docker.sock. In it, the package is checked against
#      checksums.txt and installed with `apt install ./…deb`, the README's
#      environment file is written to /etc/lockstep/admit.env as the README
#      prints it (only the store, and the app's port, changed), the example
#      units are copied from /usr/share/doc/lockstep/examples/systemd and
#      `systemctl enable --now lockstep-admit.service app-ingress.service`
#      is run: the gate must admit it and the ingress must serve.
#   3. The Epic way: the tag is pushed again with another build; a second
#      instance boots from the first one's disk: the gate must refuse it
#      at boot (exit 1, image-digest-mismatch, in the journal) and the
#      ingress must never start.
#
#   scripts/bootgate-walkthrough.sh DIST    DIST: the snapshot's dist/ (the
#                                           .deb, checksums.txt and the
#                                           linux/amd64 binary)
#
# Needs root, debootstrap, docker-registry, nginx, crane, dockerd; exits 1
# on any step that did not go as the docs say.
# Loopback only: every server listens on 127.0.0.1, on free ports.
# scripts.TestBootGateWalkthrough runs it (LOCKSTEP_TEST_FULL=1, as .ci/run).
set -euo pipefail
DIST=$(cd "${1:?usage: bootgate-walkthrough.sh DIST}" && pwd)
cd "$(dirname "$0")/.."
REPO=$PWD
DEB=$(ls "$DIST"/lockstep_*_amd64.deb 2>/dev/null | head -1)
BIN=$DIST/lockstep_linux_amd64_v1/lockstep
[ -f "$DEB" ] && [ -x "$BIN" ] && [ -f "$DIST/checksums.txt" ] || {
  echo "walkthrough: $DIST has no amd64 .deb, checksums.txt or linux_amd64 binary: run scripts/release-snapshot.sh" >&2; exit 1; }
export PATH="$REPO/.cache/bin:$PATH"
for bin in debootstrap docker-registry nginx crane docker; do
  command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || { echo "walkthrough: $bin is not installed: run scripts/install-deps.sh" >&2; exit 1; }
done

W=$(mktemp -d /tmp/lswalk.XXXXXX)
RT=$W/rt
cleanup() {
  set +e
  if [ -S "$RT/docker.sock" ]; then
    for c in $(docker -H "unix://$RT/docker.sock" ps -aq); do docker -H "unix://$RT/docker.sock" rm -f "$c" >/dev/null 2>&1; done
  fi
  if [ -f "$RT/docker.pid" ]; then
    pid=$(cat "$RT/docker.pid"); kill "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  fi
  # dockerd leaves its network namespace mounted under its exec root.
  grep -o " $W/[^ ]*" /proc/mounts | sort -r | xargs -r umount -l 2>/dev/null
  [ -f "$W/registry.pid" ] && kill "$(cat "$W/registry.pid")" 2>/dev/null
  [ -f "$W/nginx/pid" ] && kill "$(cat "$W/nginx/pid")" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "walkthrough: FAILED: $*" >&2; exit 1; }
say() { echo "== $*" >&2; }
. scripts/lib/ports.sh
REG_PORT=$(free_port) CDN_PORT=$(free_port) APP_PORT=$(free_port) INGRESS_PORT=$(free_port)
REG=127.0.0.1:$REG_PORT

# The instance's root: Debian with systemd, once per machine.
CACHE=${LOCKSTEP_CACHE:-$HOME/.cache/lockstep}/rootfs
ROOTFS=$CACHE/bookworm-systemd-1.tar
if [ ! -f "$ROOTFS" ]; then
  say "debootstrap: Debian bookworm with systemd (once per machine, a few minutes)"
  mkdir -p "$CACHE"
  R=$W/root
  debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,ca-certificates,socat \
    bookworm "$R" http://deb.debian.org/debian >"$W/debootstrap.log" 2>&1 || { tail -20 "$W/debootstrap.log" >&2; fail "debootstrap"; }
  tar -C "$R" -cf "$ROOTFS.tmp" . && mv "$ROOTFS.tmp" "$ROOTFS"
  rm -rf "$R"
fi

say "CI's side: registry on $REG, CDN on 127.0.0.1:$CDN_PORT"
mkdir -p "$W"/{registry,cdn/store,build/assets,nginx/logs,nginx/tmp,layer/srv,store,ci}
cat >"$W/registry/config.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $W/registry/data
http:
  addr: $REG
EOF
setsid docker-registry serve "$W/registry/config.yml" >"$W/registry/log" 2>&1 </dev/null &
echo $! >"$W/registry.pid"
cat >"$W/nginx/nginx.conf" <<EOF
daemon off;
master_process off;
error_log $W/nginx/logs/error.log warn;
pid $W/nginx/pid;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $W/nginx/tmp;
  proxy_temp_path $W/nginx/tmp;
  fastcgi_temp_path $W/nginx/tmp;
  uwsgi_temp_path $W/nginx/tmp;
  scgi_temp_path $W/nginx/tmp;
  types { text/html html; text/javascript js; }
  server { listen 127.0.0.1:$CDN_PORT; root $W/cdn; }
}
EOF
setsid nginx -e stderr -p "$W/nginx" -c "$W/nginx/nginx.conf" >"$W/nginx/logs/stderr" 2>&1 </dev/null &
for _ in $(seq 100); do curl -fso /dev/null "http://$REG/v2/" && curl -so /dev/null "http://127.0.0.1:$CDN_PORT/" && break; sleep 0.1; done

# The app: a static file server (the image's entrypoint) and its build.
cat >"$W/server.go" <<'EOF'
package main

import (
	"log"
	"net/http"
	"os"
)

func main() { log.Fatal(http.ListenAndServe(os.Getenv("ADDR"), http.FileServer(http.Dir("/srv")))) }
EOF
(cd "$W" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o layer/server server.go) || fail "building the app"
image() { # TAG ASSET: the app image whose page loads ASSET from the CDN
  rm -rf "$W/layer/srv" && mkdir -p "$W/layer/srv/assets"
  echo "console.log('$2')" >"$W/layer/srv/assets/$2"
  echo "<!doctype html><script src=\"http://127.0.0.1:$CDN_PORT/store/assets/$2\"></script>" >"$W/layer/srv/index.html"
  tar -C "$W/layer" -cf "$W/layer.tar" .
  crane append -f "$W/layer.tar" -t "$REG/shop/web:build" 2>>"$W/crane.log" >/dev/null &&
    crane mutate --entrypoint /server --set-platform linux/amd64 -t "$REG/shop/web:$1" "$REG/shop/web:build" 2>>"$W/crane.log" >/dev/null
}
image v1 app-1a2b3c.js || fail "pushing the image"
cp -R "$W/layer/srv/." "$W/build/"
cp -R "$W/build/." "$W/cdn/store/"
(
  cd "$W/ci"
  export COSIGN_PASSWORD=walkthrough
  "$BIN" keygen >/dev/null 2>&1
  "$BIN" record --release store-web --generation auto --store "file://$W/store" --image "web=$REG/shop/web:v1" \
    --assets "$W/build" --cdn "http://127.0.0.1:$CDN_PORT/store/" --check-cdn \
    --sign-key cosign.key --output release.json >/dev/null 2>"$W/record.log"
  "$BIN" publish --store "file://$W/store" release.json >/dev/null 2>>"$W/record.log"
) || { cat "$W/record.log" >&2; fail "record and publish"; }

say "the instance's Docker: dockerd, with its own containerd, state and socket in $RT"
# As ../shared/recipes/docker.md: no bridge, no iptables (the containers
# use the host's network, loopback only), vfs storage.
mkdir -p "$RT"
setsid dockerd --data-root "$RT/data" --exec-root "$RT/exec" --host "unix://$RT/docker.sock" --pidfile "$RT/docker.pid" \
  --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs --insecure-registry "$REG" \
  --containerd-namespace "lswalk$$" --containerd-plugins-namespace "lswalk$$p" >"$RT/log" 2>&1 </dev/null &
for _ in $(seq 1 300); do docker -H "unix://$RT/docker.sock" version >/dev/null 2>&1 && break; sleep 0.1; done
docker -H "unix://$RT/docker.sock" version >/dev/null 2>&1 || { tail -20 "$RT/log" >&2; fail "dockerd did not start"; }
DK=(docker -H "unix://$RT/docker.sock")
"${DK[@]}" import "$ROOTFS" walkthrough/systemd:bookworm >/dev/null
# The instance's own docker client; the daemon is the one above, through
# its socket (a docker.service stands for it, and the docker group that
# docker.io's package makes, which lockstep-admit.service's
# SupplementaryGroups= names).
mkdir -p "$W/extra/usr/bin" && cp "$(command -v docker)" "$W/extra/usr/bin/docker"
cat >"$W/extra/docker.service" <<'EOF'
[Unit]
Description=Docker (the walk-through's daemon, through /var/run/docker.sock)
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/bin/docker version --format {{.Server.Version}}
EOF
readme_env=$(awk '/^## Gate an instance that runs Docker/{s=1} s&&/^```sh/{b=1;next} b&&/^```/{exit} b' README.md)
echo "$readme_env" | grep -q '^LOCKSTEP_RUNNING=docker:app$' || fail "README's environment block not found (or changed): $readme_env"
# What a user changes: where the store is, and the app's port.
echo "$readme_env" | sed -e "s|^LOCKSTEP_STORE=.*|LOCKSTEP_STORE=file:///srv/walk/store|" \
  -e "s|127.0.0.1:8080|127.0.0.1:$APP_PORT|" >"$W/extra/admit.env"
cp "$W/ci/cosign.pub" "$W/extra/cosign.pub"

boot() { # NAME IMAGE: a container that boots systemd
  "${DK[@]}" run -d --name "$1" --stop-signal SIGRTMIN+3 --network host --cgroupns host \
    --cap-add SYS_ADMIN --security-opt seccomp=unconfined --security-opt apparmor=unconfined -e container=docker \
    -v /sys/fs/cgroup:/sys/fs/cgroup -v "$RT/docker.sock:/var/run/docker.sock" \
    -v "$W/store:/srv/walk/store:ro" -v "$DIST:/srv/dist:ro" -v "$W/extra:/srv/extra:ro" \
    --tmpfs /run --tmpfs /run/lock --tmpfs /tmp "$2" /lib/systemd/systemd >/dev/null
  for _ in $(seq 1 100); do
    state=$("${DK[@]}" exec "$1" systemctl is-system-running 2>/dev/null || true)
    case "$state" in running | degraded) return 0 ;; esac
    sleep 0.2
  done
  "${DK[@]}" logs "$1" 2>&1 | tail -20 >&2
  fail "$1: systemd did not finish booting ($state)"
}
on() { local c=$1; shift; "${DK[@]}" exec -i "$c" bash -c "$*"; }

say "instance 1 boots; the package is installed and the gate set up as the README says"
boot instance1 walkthrough/systemd:bookworm
on instance1 "set -e
  cd /srv/dist && sha256sum --ignore-missing -c checksums.txt >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./$(basename "$DEB") >/dev/null 2>&1
  cp /srv/extra/admit.env /etc/lockstep/admit.env && cp /srv/extra/cosign.pub /etc/lockstep/cosign.pub
  cp /srv/extra/usr/bin/docker /usr/bin/docker && cp /srv/extra/docker.service /etc/systemd/system/ && groupadd -f docker
  cd /usr/share/doc/lockstep/examples/systemd
  cp -R app.service app-ingress.service app-ingress.service.d /etc/systemd/system/
  cd /etc/systemd/system
  # Adapt the image and ports (this daemon has no bridge: the host's network, loopback only).
  sed -i -e 's|registry.example.com/store/web:v1|$REG/shop/web:v1|g' \
    -e 's|-p 127.0.0.1:8080:8080|--network host -e ADDR=127.0.0.1:$APP_PORT|' app.service
  sed -i 's|TCP-LISTEN:80,fork,reuseaddr TCP:127.0.0.1:8080|TCP-LISTEN:$INGRESS_PORT,bind=127.0.0.1,fork,reuseaddr TCP:127.0.0.1:$APP_PORT|' app-ingress.service
  grep -q ADDR=127.0.0.1:$APP_PORT app.service && grep -q TCP-LISTEN:$INGRESS_PORT app-ingress.service
  systemctl daemon-reload
  systemctl enable --now lockstep-admit.service app-ingress.service" || {
  on instance1 "journalctl --no-pager -b -u app -u lockstep-admit -n 40" >&2 || true; fail "instance 1: enable --now failed"; }
on instance1 "systemctl is-active lockstep-admit.service app-ingress.service" >/dev/null ||
  { on instance1 "journalctl --no-pager -b -u lockstep-admit -n 40" >&2; fail "instance 1: the gate or the ingress is not active"; }
on instance1 "journalctl --no-pager -b -u lockstep-admit -o cat" | grep -q '^ADMITTED against store-web@1' ||
  fail "instance 1: the journal does not show the admission"
for _ in $(seq 1 50); do curl -fs "http://127.0.0.1:$INGRESS_PORT/" >/dev/null && break; sleep 0.1; done
curl -fs "http://127.0.0.1:$INGRESS_PORT/" | grep -q app-1a2b3c.js || fail "instance 1: the ingress does not serve the app"
echo "instance 1: ADMITTED at boot; the ingress serves" >&2

say "the Epic way: the tag is pushed again with another build; instance 2 boots from instance 1's disk"
"${DK[@]}" commit instance1 walkthrough/instance:1 >/dev/null
"${DK[@]}" stop -t 30 instance1 >/dev/null
"${DK[@]}" rm -f app >/dev/null 2>&1 || true
image v1 app-9f8e7d.js || fail "pushing the image again"
boot instance2 walkthrough/instance:1
for _ in $(seq 1 150); do
  st=$(on instance2 "systemctl show -p ActiveState --value lockstep-admit.service")
  case "$st" in active | failed) break ;; esac
  sleep 0.2
done
[ "$st" = failed ] || fail "instance 2: the gate is $st, want failed"
on instance2 "systemctl show -p ExecMainStatus --value lockstep-admit.service" | grep -qx 1 ||
  fail "instance 2: the gate did not exit 1 (refused)"
on instance2 "journalctl --no-pager -b -u lockstep-admit -o cat" | grep -q 'refuse image-digest-mismatch \[image web\]' ||
  fail "instance 2: the journal does not name image-digest-mismatch"
[ "$(on instance2 "systemctl show -p ActiveState --value app-ingress.service")" != active ] || fail "instance 2: the ingress started"
! curl -fs -m 2 "http://127.0.0.1:$INGRESS_PORT/" >/dev/null || fail "instance 2: something serves on the ingress port"
echo "instance 2: REFUSED at boot (image-digest-mismatch); the ingress never started" >&2
say "ok: the Docker section, as written, admits the release and refuses the re-pushed tag"
