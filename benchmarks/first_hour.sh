#!/usr/bin/env bash
# The first hour of a new user, timed step by step: a fresh clone, the light
# install into a new virtual environment, `arena demo`, a bot in Go (new,
# build, check, match), and a competition for friends on loopback (serve
# with the ladder, a user token, login, remote submit of two bots, watch).
#
#   benchmarks/first_hour.sh [REPO] [WORKDIR]
#
# REPO (default: this checkout) is cloned into WORKDIR (default: a new
# directory under /tmp); the arena's data, the login and the venv stay in
# WORKDIR. pip's cache is reused; Go starts with empty module and build
# caches in WORKDIR, as on a new machine (FIRST_HOUR_WARM_GO=1 keeps the
# installed ones). Prints one line per step: seconds, exit status, the step.
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
work=${2:-$(mktemp -d /tmp/first-hour.XXXXXX)}
mkdir -p "$work"
export KAHUNA_ARENA_DATA="$work/data" XDG_CONFIG_HOME="$work/config"
if [ "${FIRST_HOUR_WARM_GO:-0}" != 1 ]; then
    export GOPATH="$work/go" GOCACHE="$work/go-build" GOMODCACHE="$work/go/pkg/mod"
fi
log="$work/log.txt"
: >"$log"

step() {  # step NAME COMMAND...: run it, print its wall time and status
    local name=$1 start end status
    shift
    start=$(date +%s.%N)
    echo "== $name: $*" >>"$log"
    "$@" >>"$log" 2>&1
    status=$?
    end=$(date +%s.%N)
    printf '%8.1f s  exit %-3s %s\n' "$(echo "$end - $start" | bc)" "$status" "$name"
    return 0
}

echo "first hour in $work (log: $log), load $(cut -d' ' -f1-3 /proc/loadavg)"
total_start=$(date +%s.%N)
step "git clone" git clone -q "$repo" "$work/kahuna-arena"
cd "$work/kahuna-arena" || exit 1
step "python3 -m venv" python3 -m venv "$work/venv"
export VIRTUAL_ENV="$work/venv" PATH="$work/venv/bin:$PATH"
step "scripts/install --no-demo" scripts/install --no-demo
step "arena demo" arena demo --no-progress
step "arena bot new go mygo" arena bot new go mygo
step "mygo/build.sh" mygo/build.sh
step "arena bot check mygo" arena bot check mygo
step "arena match mygo python_random" \
    arena match mygo sample_bots/python_random --games 4 --seed 1

port=$((20000 + RANDOM % 20000))
web=$((port + 1))
arena serve --host 127.0.0.1 --port "$port" --web-port "$web" --ladder \
    --concurrency 1 >>"$work/serve.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null' EXIT
wait_port() { for _ in $(seq 1 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
step "arena serve --ladder (until it listens)" wait_port
login() { arena token create alice | arena remote login "grpc://127.0.0.1:$port"; }
step "token create | remote login" login
step "arena remote submit mygo" arena remote submit mygo
step "arena bot new python mypy" arena bot new python mypy
step "arena remote submit mypy" arena remote submit mypy
mygo_played() { for _ in $(seq 1 1200); do
    curl -sf "http://127.0.0.1:$web/api/ladder" | python3 -c '
import json, sys
games = json.load(sys.stdin)["recent_games"]
sys.exit(not any("mygo" in g["bots"] for g in games))' && return 0
    sleep 0.5; done; return 1; }
step "mygo's first ladder game stored (/api/ladder)" mygo_played
step "arena remote watch ladder (20 s at most)" timeout 20 arena remote watch ladder
step "arena remote leaderboard" arena remote leaderboard
printf '%8.1f s  total\n' "$(echo "$(date +%s.%N) - $total_start" | bc)"
