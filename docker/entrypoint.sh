#!/bin/sh
# Prepare a delegated cgroup v2 tree for the bots' groups, then run the command.
#
# With --cgroupns=private the container sees its own cgroup as the root of
# /sys/fs/cgroup. Docker mounts it read-only; with CAP_SYS_ADMIN (and an
# AppArmor profile that allows mount) we remount it read-write. cgroup v2's
# "no internal processes" rule forbids enabling controllers for child groups
# while processes live in the parent, so every process moves to a leaf group
# ("init") first; the arena then creates kahuna-arena/<bot> groups beside it.
# Anything that fails here is reported and left to the arena, which names
# what is missing and refuses untrusted bots without --unsafe-no-sandbox.
set -eu

CGROUP=/sys/fs/cgroup

# Only in a private cgroup namespace, where our group is the root ("0::/"):
# never rearrange a host's cgroup tree if this script is run outside a container.
if [ -f "$CGROUP/cgroup.controllers" ] && [ "$(cat /proc/self/cgroup)" = "0::/" ]; then
    if ! touch "$CGROUP/.arena-write-test" 2>/dev/null; then
        mount -o remount,rw "$CGROUP" 2>/dev/null \
            || echo "arena-entrypoint: $CGROUP is read-only (needs CAP_SYS_ADMIN, --cgroupns=private, AppArmor allowing mount)" >&2
    fi
    rm -f "$CGROUP/.arena-write-test" 2>/dev/null || true
    if [ -w "$CGROUP/cgroup.subtree_control" ]; then
        mkdir -p "$CGROUP/init"
        while read -r pid; do
            echo "$pid" > "$CGROUP/init/cgroup.procs" 2>/dev/null || true
        done < "$CGROUP/cgroup.procs"
        for controller in memory pids cpu; do
            echo "+$controller" > "$CGROUP/cgroup.subtree_control" 2>/dev/null \
                || echo "arena-entrypoint: cannot delegate the $controller controller" >&2
        done
    fi
elif [ ! -f "$CGROUP/cgroup.controllers" ]; then
    echo "arena-entrypoint: no cgroup v2 at $CGROUP (cgroup v1 needs its hierarchies mounted read-write)" >&2
else
    echo "arena-entrypoint: not in a private cgroup namespace (--cgroupns=private); cgroups left as they are" >&2
fi

# A Ray token mounted from the host ($KAHUNA_RAY_TOKEN_FROM, docker/compose.ray.yaml)
# belongs to the host's user, and the arena refuses a token that is not the file of
# the user who runs it: copy it to $RAY_AUTH_TOKEN_PATH, this user's, mode 0600 (a
# mounted token other users of the host can read is refused, as the arena would).
if [ -n "${KAHUNA_RAY_TOKEN_FROM:-}" ]; then
    if [ -z "${RAY_AUTH_TOKEN_PATH:-}" ]; then
        echo "arena-entrypoint: KAHUNA_RAY_TOKEN_FROM needs RAY_AUTH_TOKEN_PATH (where to copy the token)" >&2
        exit 1
    fi
    if [ ! -f "$KAHUNA_RAY_TOKEN_FROM" ] || [ ! -s "$KAHUNA_RAY_TOKEN_FROM" ]; then
        echo "arena-entrypoint: no Ray token at $KAHUNA_RAY_TOKEN_FROM: make one with \`arena ray-token create docker/ray_token\` before \`docker compose up\`" >&2
        exit 1
    fi
    mode=$(stat -L -c %a "$KAHUNA_RAY_TOKEN_FROM")
    if [ $((0$mode & 077)) -ne 0 ]; then
        echo "arena-entrypoint: the Ray token $KAHUNA_RAY_TOKEN_FROM is open to other users of the host (mode $mode): chmod 600 it on the host (docker/ray_token, or the file \$KAHUNA_RAY_TOKEN names)" >&2
        exit 1
    fi
    (umask 077 && mkdir -p "$(dirname "$RAY_AUTH_TOKEN_PATH")" \
        && rm -f "$RAY_AUTH_TOKEN_PATH" \
        && cat "$KAHUNA_RAY_TOKEN_FROM" > "$RAY_AUTH_TOKEN_PATH")
fi

exec "$@"
