#!/usr/bin/env bash
# Installs what lockstep's tests need, where it is missing: from Debian,
# docker-registry, nginx, wrk, hey, Ceph (radosgw), gcc (for go test -race),
# containerd 1.6, runc and docker.io 20.10 (the container runtimes the
# running sources are tested against, started by scripts/runtimes.sh: the
# tests start daemons of their own and never use a system one) and Chromium
# (the browser oracle), etcd (under the tests' real kube-apiserver); from
# the Go module proxy, the cosign CLI, staticcheck, crane, helm (the chart's
# tests: helm lint, template, install) and kube-apiserver (from
# k8s.io/kubernetes, for internal/testkit/kubetest's control plane), built once per
# machine into ~/.cache/lockstep/tools and linked into .cache/bin
# (scripts/lib/tools.sh).
# The release tools (goreleaser, ko, cyclonedx-gomod) come from
# scripts/install-release-tools.sh. The Debian packages are installed while
# the Go tools build. Idempotent: a second run installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/tools.sh

COSIGN_VERSION=v2.6.5
TOXIPROXY_VERSION=v2.5.0
STATICCHECK_VERSION=v0.7.0
# crane v0.21 or later writes artifactType on index entries (the real-index tests).
CRANE_VERSION=v0.21.0
# internal/testkit/kubetest's control plane; keep in step with kubetest.Version.
KUBE_APISERVER_VERSION=v1.34.4
# nektos/act, the runner emulator scripts.TestActionUnderAct runs the Action
# under (host mode: no containers). About 5 min to build once, at load 10.
ACT_VERSION=v0.2.89

need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }
have docker-registry || need+=(docker-registry)
have nginx || need+=(nginx-light)
have wrk || need+=(wrk)
have hey || need+=(hey)
have radosgw || need+=(ceph-mon ceph-osd radosgw)
have gcc || need+=(gcc libc6-dev) # go test -race needs cgo
have containerd || need+=(containerd)
have runc || need+=(runc)
have dockerd || need+=(docker.io)
have chromium || need+=(chromium)
have etcd || need+=(etcd-server) # under kube-apiserver (internal/testkit/kubetest)
# The boot gate's walk-through (scripts/bootgate-walkthrough.sh) boots
# instances whose PID 1 is systemd, from a Debian root it makes once.
have debootstrap || need+=(debootstrap)
# The Action's install reads the releases API with jq (as GitHub's runners
# have it); the artefact tests unpack the .rpm with rpm2cpio and cpio and
# judge the units with systemd-analyze.
have jq || need+=(jq)
have rpm2cpio || need+=(rpm2cpio)
have cpio || need+=(cpio)
have systemd-analyze || need+=(systemd)
# The packages are held to Debian's and Fedora's checks (TestPackagesLint).
have lintian || need+=(lintian)
have rpmlint || need+=(rpmlint)
# rpmlint reads a package with rpm, which is only its Recommends (and
# apt-get here installs none): without it every .rpm is "E: fatal error
# while reading ... No such file or directory: 'rpm'".
have rpm || need+=(rpm)
# The system's roots: bench/roots.sh (in bench/run.sh) loads them.
[ -e /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)

apt_pid=
apt_log=${TMPDIR:-/tmp}/lockstep-apt.$$.log apt_took=${TMPDIR:-/tmp}/lockstep-apt.$$.took
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need[*]} (while the Go tools build)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  (
    start=$SECONDS
    $SUDO apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
    rc=$?
    # Its time and CPU (user, then system: of apt-get and dpkg), for the
    # breakdown a fresh machine's run ends with. times writes straight to
    # the file: in a pipe or $(...) it would run in a fork, which counts
    # no children.
    { echo "$((SECONDS - start)) s"; times; } >"$apt_took"
    exit $rc
  ) >"$apt_log" 2>&1 &
  apt_pid=$!
fi

# The Go tools build in two lanes at once: a cold build waits on the
# module proxy's downloads and on its link (mostly one thread) about as
# much as it computes, and the other lane fills those waits. The lanes are
# about even (CPU-seconds, cold): kube-apiserver 900, staticcheck and crane
# 200; cosign 600, helm 500, act 150 and toxiproxy.
(
  kube_apiserver "$KUBE_APISERVER_VERSION"
  gotool staticcheck honnef.co/go/tools "$STATICCHECK_VERSION" cmd/staticcheck
  gotool crane github.com/google/go-containerregistry "$CRANE_VERSION" cmd/crane
) &
lane=$!
gotool cosign github.com/sigstore/cosign/v2 "$COSIGN_VERSION" cmd/cosign
gotool helm helm.sh/helm/v4 "$HELM_VERSION" cmd/helm
gotool act github.com/nektos/act "$ACT_VERSION"
# Shopify's toxiproxy: bench/closure.sh puts a CDN 30 ms away behind it.
gotool toxiproxy-server github.com/Shopify/toxiproxy/v2 "$TOXIPROXY_VERSION" cmd/server
wait "$lane" || { echo "install-deps: a Go tool did not build (above)" >&2; exit 1; }

if [ -n "$apt_pid" ]; then
  if ! wait "$apt_pid"; then
    cat "$apt_log" >&2
    echo "install-deps: apt-get install ${need[*]} failed (above)" >&2
    rm -f "$apt_log" "$apt_took"
    exit 1
  fi
  echo "install-deps: Debian's packages installed in $(head -1 "$apt_took"), CPU (user, system) $(tail -1 "$apt_took")" >&2
  rm -f "$apt_log" "$apt_took"
fi
