#!/usr/bin/env bash
# bench/start.sh: process start-up, `lockstep version` against `crane
# version` (the anchor: a Go CLI over the same registry library), in
# ROUNDS interleaved rounds of STARTS starts each; one line per round with
# the mean milliseconds per start. Then the binary's size and its ten
# heaviest package initialisations (GODEBUG=inittrace=1, one start).
# BEFORE=BIN also starts BIN each round (role `before`): a change's
# before/after in the same interleaved run. FLOORS=1 also starts the
# programs of bench/startfloor (roles floor-gate, floor-gatenosig,
# floor-gatecore, floor-containerd, floor-containerdapi, floor-awsclients,
# floor-empty): what `lockstep admit` links, with and without cosign, what
# a gate cannot do without, containerd's client alone (which lockstep no
# longer links), the gRPC API stubs admission/running calls instead, the
# three schema-serde AWS clients alone, and an empty Go program.
#
#   bench/start.sh            ROUNDS=5 STARTS=20 BEFORE= FLOORS=0
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/.cache/bin:$PATH"
ROUNDS=${ROUNDS:-5}
STARTS=${STARTS:-20}
command -v crane >/dev/null || { echo "bench/start.sh: crane is not installed (bench/pin.sh installs it)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$(lockstep_bin "$tmp")
crane=$(command -v crane)

starts() { # BIN: the mean milliseconds of one start over STARTS starts
	local t0
	t0=$(now_ns)
	for _ in $(seq "$STARTS"); do "$1" version >/dev/null; done
	echo "scale=3; ($(now_ns) - $t0) / 1000000 / $STARTS" | bc
}
floors=()
if [ "${FLOORS:-0}" = 1 ]; then
	for f in gate gatenosig gatecore containerd containerdapi awsclients empty; do release_build "$tmp/$f" "./bench/startfloor/$f" && floors+=("$f"); done
fi
"$bin" version >/dev/null; "$crane" version >/dev/null # page cache
for _ in $(seq "$ROUNDS"); do
	sample start lockstep "$(starts "$bin")" ms "lockstep version (mean of $STARTS starts)"
	[ -z "${BEFORE:-}" ] || sample start before "$(starts "$BEFORE")" ms "$BEFORE version (mean of $STARTS starts)"
	sample start anchor "$(starts "$crane")" ms "crane version (mean of $STARTS starts)"
	for f in "${floors[@]}"; do sample start "floor-$f" "$(starts "$tmp/$f")" ms "bench/startfloor/$f (mean of $STARTS starts)"; done
done
echo "# binary size: lockstep $(stat -c %s "$bin") bytes, crane $(stat -c %s "$crane") bytes${BEFORE:+, before $(stat -c %s "$BEFORE") bytes}"
for f in "${floors[@]}"; do echo "# binary size: bench/startfloor/$f $(stat -c %s "$tmp/$f") bytes"; done
echo "# heaviest package inits (ms, one start):"
GODEBUG=inittrace=1 "$bin" version 2>&1 >/dev/null | awk '/^init / { print $5, $2 }' | sort -rn | sed -n 1,10p | sed 's/^/#   /'
