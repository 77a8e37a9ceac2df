#!/usr/bin/env bash
# Starts (or stops) the container runtimes the running-source integration
# tests read: Debian's containerd 1.6 (with its CRI plugin) and dockerd
# 20.10 on that containerd, as root, each with its own state directories
# and sockets under DIR, the native snapshotter (no overlay), vfs storage
# for Docker, and no network set-up (no bridge, no iptables, no CNI: pods
# and containers use the host's network or none).
#   scripts/runtimes.sh start DIR [REGISTRY]   REGISTRY: a plain-HTTP
#                                              loopback host:port to pull from
#   scripts/runtimes.sh stop DIR
# start writes DIR/env (CONTAINERD_ADDRESS, CONTAINER_RUNTIME_ENDPOINT,
# DOCKER_HOST) for `. DIR/env`. The daemons run in a private mount
# namespace with a tmpfs over /run and /etc/docker, so that what they keep
# there (containerd's shim sockets in /run/containerd/s, runc's state,
# dockerd's key.json) stays theirs: the host's /run/containerd and
# /var/run/docker.sock are never touched. start exits 4 when this machine
# cannot run them (not root, no mount namespace, no cgroups), 1 with the
# tail of its log when a daemon does not start.
set -euo pipefail
cmd=${1:?usage: runtimes.sh start|stop DIR [REGISTRY]}
D=${2:?usage: runtimes.sh start|stop DIR [REGISTRY]}
REG=${3:-}
case "$cmd" in
stop)
  for p in dockerd containerd; do
    if [ -f "$D/$p.pid" ]; then
      pid=$(cat "$D/$p.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$D/$p.pid"
    fi
  done
  # Shims outlive containerd by design; those of this DIR go too, with
  # the containers they hold (their children).
  for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $D/containerd.sock" || true); do
    pkill -9 -P "$p" 2>/dev/null || true
    kill -9 "$p" 2>/dev/null || true
  done
  exit 0 ;;
start) ;;
*) echo "usage: runtimes.sh start|stop DIR [REGISTRY]" >&2; exit 2 ;;
esac

for bin in containerd containerd-shim-runc-v2 runc dockerd unshare; do
  if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ]; then
    echo "runtimes.sh: $bin is not installed; run scripts/install-deps.sh" >&2; exit 1
  fi
done
# Exit 4: this machine cannot run them (the tests then fall back to
# recorded answers); exit 1: something that should work did not.
if [ "$(id -u)" != 0 ]; then
  echo "runtimes.sh: containerd and dockerd run as root here (rootless needs user namespaces and slirp); run as root" >&2; exit 4
fi
if ! unshare --mount --propagation private true 2>/dev/null; then
  echo "runtimes.sh: no private mount namespace here (unshare --mount fails), so the daemons cannot get a /run of their own" >&2; exit 4
fi
if [ ! -d /sys/fs/cgroup ] || [ -z "$(ls -A /sys/fs/cgroup 2>/dev/null)" ]; then
  echo "runtimes.sh: no cgroup file system at /sys/fs/cgroup: runc cannot start containers" >&2; exit 4
fi
mkdir -p "$D"/{containerd/root,containerd/state,certs.d,docker/data,docker/exec,log}
# The shim's socket path (DIR/containerd.sock.ttrpc and the shims' under
# /run/containerd/s) must fit a sockaddr_un: 108 bytes.
if [ ${#D} -gt 60 ]; then echo "runtimes.sh: DIR $D is too long for unix sockets (at most 60 characters)" >&2; exit 1; fi

if [ -n "$REG" ]; then
  case "$REG" in 127.*|localhost:*|\[::1\]:*) ;; *) echo "runtimes.sh: registry $REG is not loopback" >&2; exit 2 ;; esac
  mkdir -p "$D/certs.d/$REG"
  printf 'server = "http://%s"\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "$REG" "$REG" >"$D/certs.d/$REG/hosts.toml"
fi
SANDBOX=${RUNTIMES_SANDBOX_IMAGE:-${REG:+$REG/pause:1}}
cat >"$D/containerd.toml" <<CONF
version = 2
root = "$D/containerd/root"
state = "$D/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.overlayfs", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$D/containerd.sock"
[ttrpc]
  address = "$D/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${SANDBOX:-registry.k8s.io/pause:3.6}"
  disable_apparmor = true
  restrict_oom_score_adj = true
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$D/cni/bin"
    conf_dir = "$D/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$D/certs.d"
CONF

# run NAME CMD... starts CMD in the private mount namespace, its pid in
# DIR/NAME.pid and its log in DIR/log/NAME.log.
run() {
  local name=$1; shift
  # shellcheck disable=SC2016
  LIBMOUNT_UTAB="$D/utab" setsid unshare --mount --propagation private sh -c '
    mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -p /run/lock &&
    { [ ! -d /etc/docker ] || mount -t tmpfs -o mode=0700 tmpfs /etc/docker; } &&
    exec "$@"' sh "$@" >"$D/log/$name.log" 2>&1 </dev/null &
  echo $! >"$D/$name.pid"
}

# wait_sock SOCKET NAME waits up to 30 s for the daemon to listen.
wait_sock() {
  for _ in $(seq 1 300); do
    [ -S "$1" ] && return 0
    kill -0 "$(cat "$D/$2.pid")" 2>/dev/null || break
    sleep 0.1
  done
  echo "runtimes.sh: $2 did not start (its socket $1 never appeared). The last lines of its log:" >&2
  tail -n 20 "$D/log/$2.log" >&2
  "$0" stop "$D"
  exit 1
}

echo '{}' >"$D/daemon.json"
run containerd containerd --config "$D/containerd.toml"
wait_sock "$D/containerd.sock" containerd
run dockerd dockerd --data-root "$D/docker/data" --exec-root "$D/docker/exec" --pidfile "$D/docker/dockerd.pid" \
  --host "unix://$D/docker.sock" --containerd "$D/containerd.sock" --storage-driver vfs \
  --bridge none --iptables=false --ip6tables=false --ip-masq=false --ip-forward=false --userland-proxy=false \
  --config-file "$D/daemon.json" --log-level warn
wait_sock "$D/docker.sock" dockerd
cat >"$D/env" <<ENV
CONTAINERD_ADDRESS=$D/containerd.sock
CONTAINER_RUNTIME_ENDPOINT=unix://$D/containerd.sock
DOCKER_HOST=unix://$D/docker.sock
ENV
echo "runtimes: containerd on $D/containerd.sock (CRI too), dockerd on $D/docker.sock" >&2
