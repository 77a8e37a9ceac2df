#!/usr/bin/env bash
# The release's figures, in one interleaved run (each round runs every
# variant once, so that load from other work hits all alike):
#   - the Action's install (scripts/action-install.sh: download checksums.txt
#     and the archive from a loopback HTTP server serving dist/, verify,
#     unpack; an empty tool cache each time) against the compile it replaces
#     (go build -trimpath ./cmd/lockstep, warm build cache: the link; with
#     COLD=1 also an empty GOCACHE, the first run of a job);
#   - binary size and `lockstep version` start time of the release build
#     (dist/, stripped, static) against today's default build (go build).
# Prints min, median and their ratio per figure, and the load average.
# Needs dist/ (scripts/release-snapshot.sh) and python3 (the HTTP server).
#
#   bench/release.sh              5 rounds, 50 starts per variant per round
#   ROUNDS=9 STARTS=100 COLD=1 bench/release.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
STARTS=${STARTS:-50}
[ -f dist/metadata.json ] || { echo "bench/release.sh: no dist/; run scripts/release-snapshot.sh" >&2; exit 2; }
version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
arch=$(go env GOARCH)
runner_arch=$([ "$arch" = arm64 ] && echo ARM64 || echo X64)
tmp=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT

mkdir -p "$tmp/www"
ln -s "$PWD/dist" "$tmp/www/v$version"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$tmp/www" "$port" >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; sleep 0.1; done

tar -xzf "dist/lockstep_${version}_linux_${arch}.tar.gz" -C "$tmp" lockstep
mv "$tmp/lockstep" "$tmp/lockstep-release"
go build -o "$tmp/lockstep-default" ./cmd/lockstep

now() { date +%s%N; }
ms() { echo "scale=1; ($2 - $1) / 1000000" | bc; }
record() { echo "$2" >>"$tmp/$1.times"; } # FIGURE VALUE

install_once() {
  local t0 t1
  t0=$(now)
  RUNNER_OS=Linux RUNNER_ARCH=$runner_arch RUNNER_TEMP="$tmp/run" RUNNER_TOOL_CACHE="$tmp/cache.$1" \
    INPUT_VERSION="v$version" INPUT_VERIFY_SIGNATURE=false INPUT_DOWNLOAD_URL="http://127.0.0.1:$port" INPUT_ALLOW_HTTP_DOWNLOAD=true \
    scripts/action-install.sh >/dev/null 2>&1
  t1=$(now)
  rm -rf "$tmp/cache.$1"
  record install "$(ms "$t0" "$t1")"
}
compile_once() { # FIGURE [GOCACHE]
  local t0 t1
  t0=$(now)
  if [ -n "${2:-}" ]; then GOCACHE=$2 go build -trimpath -o "$tmp/built" ./cmd/lockstep; else go build -trimpath -o "$tmp/built" ./cmd/lockstep; fi
  t1=$(now)
  [ -z "${2:-}" ] || rm -rf "$2"
  rm -f "$tmp/built"
  record "$1" "$(ms "$t0" "$t1")"
}
starts() { # FIGURE BIN: STARTS runs of `version`, the mean per start
  local t0 t1
  t0=$(now)
  for _ in $(seq "$STARTS"); do "$2" version >/dev/null; done
  t1=$(now)
  record "$1" "$(echo "scale=3; ($t1 - $t0) / 1000000 / $STARTS" | bc)"
}

mkdir -p "$tmp/run"
for r in $(seq "$ROUNDS"); do
  install_once "$r"
  compile_once compile-warm
  [ "${COLD:-0}" = 1 ] && compile_once compile-cold "$tmp/gocache"
  starts start-release "$tmp/lockstep-release"
  starts start-default "$tmp/lockstep-default"
done

figures() { # FIGURE: min median
  sort -n "$tmp/$1.times" | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s\n", v[1], m }'
}
line() { # LABEL FIGURE BASELINE
  read -r min med < <(figures "$2")
  read -r bmin bmed < <(figures "$3")
  printf '%-44s min %9s ms  median %9s ms   vs %-14s min %9s ms  median %9s ms   ratio (median) %s\n' \
    "$1" "$min" "$med" "$3" "$bmin" "$bmed" "$(echo "scale=3; $med / $bmed" | bc)"
}
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $ROUNDS rounds, lockstep $version linux/$arch"
line "Action install (download + verify + unpack)" install compile-warm
[ "${COLD:-0}" = 1 ] && line "Action install (download + verify + unpack)" install compile-cold
line "lockstep version start (release build)" start-release start-default
rs=$(stat -c %s "$tmp/lockstep-release")
ds=$(stat -c %s "$tmp/lockstep-default")
printf '%-44s %d bytes (%.1f MiB)   vs default build %d bytes (%.1f MiB)   ratio %s\n' "binary size (release build)" \
  "$rs" "$(echo "$rs / 1048576" | bc -l)" "$ds" "$(echo "$ds / 1048576" | bc -l)" "$(echo "scale=3; $rs / $ds" | bc)"
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
