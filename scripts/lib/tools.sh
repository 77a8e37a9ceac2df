# Sourced by scripts/install-deps.sh and scripts/install-release-tools.sh:
# pinned tools built from the Go module proxy once per machine, not once per
# clone.
#
# A tool lives in $LOCKSTEP_CACHE/tools/NAME@VERSION/NAME (LOCKSTEP_CACHE
# defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/lockstep), shared by every
# clone on the machine; the clone's .cache/bin/NAME is a link to it, which is
# where the scripts and tests look. A cached binary is used only when `go
# version -m` says it was built from that module at that version; it is
# installed into a temporary folder and renamed into place, so a clone that
# is killed halfway, or two clones installing at once, never leave a half
# written tool behind; and two installs of one tool at once (two clones, or
# the two install scripts that both need helm) build it once: the second
# waits on the tool's lock (locked), then finds it built.
LOCKSTEP_CACHE=${LOCKSTEP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lockstep}
export LOCKSTEP_CACHE

# Helm, in both scripts: the tests lint, render and install
# deploy/helm/lockstep with it (install-deps.sh), and the release packages
# and pushes the chart with the same version (install-release-tools.sh).
HELM_VERSION=v4.3.2

# locked NAME@VERSION CMD...: runs CMD holding the tool's lock
# ($LOCKSTEP_CACHE/locks/tool-NAME@VERSION), so that two installs of one
# tool at once build it once. Under set -e a failing CMD ends the shell,
# and the lock with it; otherwise its status is returned. (Not "CMD ||":
# that would switch set -e off inside CMD.)
locked() {
  local lock rc
  mkdir -p "$LOCKSTEP_CACHE/locks"
  exec {lock}>"$LOCKSTEP_CACHE/locks/tool-$1"
  shift
  flock "$lock"
  "$@"
  rc=$?
  exec {lock}>&-
  return "$rc"
}

# built_from BIN MODULE VERSION: BIN was built from MODULE@VERSION.
built_from() {
  go version -m "$1" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+$2[[:space:]]+$3([[:space:]]|$)"
}

# gotool NAME MODULE VERSION [PACKAGE-IN-MODULE]: the tool NAME, built from
# MODULE[/PACKAGE]@VERSION, linked as .cache/bin/NAME (run from the clone's
# root).
gotool() { locked "$1@$3" gotool_locked "$@"; }
gotool_locked() {
  local name=$1 mod=$2 ver=$3 pkg=${4:-}
  local dir="$LOCKSTEP_CACHE/tools/$name@$ver"
  mkdir -p "$LOCKSTEP_CACHE/tools" .cache/bin
  # A clone set up before the cache had its own copy: adopt it.
  if ! built_from "$dir/$name" "$mod" "$ver" && [ ! -L ".cache/bin/$name" ] && built_from ".cache/bin/$name" "$mod" "$ver"; then
    mkdir -p "$dir" && mv ".cache/bin/$name" "$dir/$name"
  fi
  if ! built_from "$dir/$name" "$mod" "$ver"; then
    local tmp start=$SECONDS
    tmp=$(mktemp -d "$LOCKSTEP_CACHE/tools/.$name.XXXXXX")
    echo "tools: go install $mod${pkg:+/$pkg}@$ver (once per machine, into $dir)" >&2
    # Static (no cgo): the tools need no C library, and a machine without
    # gcc builds them too. -trimpath, as their releases are built: and so
    # the standard library is compiled once for all of them, for
    # kube-apiserver (build-kube-apiserver.sh) and for lockstep's own
    # static builds (the snapshot, ko, the tests' binary), not once more.
    if ! (cd / && CGO_ENABLED=0 GOBIN="$tmp" go install -trimpath "$mod${pkg:+/$pkg}@$ver"); then
      rm -rf "$tmp"
      echo "tools: could not build $name $ver from the Go module proxy; run scripts/install-deps.sh again when it is reachable" >&2
      return 1
    fi
    # A package whose folder is not the tool's name (toxiproxy's cmd/server)
    # installs under its folder's name.
    if [ ! -e "$tmp/$name" ] && [ -n "$pkg" ] && [ -e "$tmp/${pkg##*/}" ]; then
      mv "$tmp/${pkg##*/}" "$tmp/$name"
    fi
    rm -rf "$dir"
    mv -T "$tmp" "$dir" # no other install of it runs meanwhile (locked)
    echo "tools: $name $ver built in $((SECONDS - start)) s" >&2
  fi
  ln -sfn "$dir/$name" ".cache/bin/$name"
}

# kube_apiserver VERSION: kube-apiserver VERSION (a k8s.io/kubernetes
# version, e.g. v1.34.4), for the tests' real control plane
# (internal/testkit/kubetest), built once per machine into
# $LOCKSTEP_CACHE/tools/kube-apiserver@VERSION by
# scripts/lib/build-kube-apiserver.sh and linked as .cache/bin/kube-apiserver
# (run from the clone's root). A cached binary is used when its --version
# says "Kubernetes VERSION" (its Go module data names k8s.io/kubernetes's
# main module only as "(devel)", the module being rebuilt from a copy).
# The build costs about 900 CPU-seconds and 2 GB of RAM, once.
kube_apiserver() { locked "kube-apiserver@$1" kube_apiserver_locked "$1"; }
kube_apiserver_locked() {
  local ver=$1 name=kube-apiserver
  local dir="$LOCKSTEP_CACHE/tools/$name@$ver"
  mkdir -p "$LOCKSTEP_CACHE/tools" .cache/bin
  if [ "$("$dir/$name" --version 2>/dev/null)" != "Kubernetes $ver" ]; then
    local tmp start=$SECONDS
    tmp=$(mktemp -d "$LOCKSTEP_CACHE/tools/.$name.XXXXXX")
    echo "tools: building $name $ver from k8s.io/kubernetes on the Go module proxy (once per machine, into $dir; about 15 CPU-minutes)" >&2
    if ! scripts/lib/build-kube-apiserver.sh "$ver" "$tmp/$name" ||
      [ "$("$tmp/$name" --version 2>/dev/null)" != "Kubernetes $ver" ]; then
      rm -rf "$tmp"
      echo "tools: could not build $name $ver from the Go module proxy; run scripts/install-deps.sh again when it is reachable" >&2
      return 1
    fi
    rm -rf "$dir"
    mv -T "$tmp" "$dir" # no other install of it runs meanwhile (locked)
    echo "tools: $name $ver built in $((SECONDS - start)) s" >&2
  fi
  ln -sfn "$dir/$name" ".cache/bin/$name"
}
