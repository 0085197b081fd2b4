#!/usr/bin/env bash
# Builds ./bot: one fully static, stripped x86-64 binary (gRPC C++, protobuf,
# abseil, re2, c-ares, zlib, libstdc++ and glibc all linked in), so it runs
# in the arena's "native" sandbox on any host, whether or not it has
# libgrpc++. Needs Debian 12's packages:
#   apt-get install g++ pkg-config protobuf-compiler protobuf-compiler-grpc \
#       libgrpc++-dev libprotobuf-dev
# The build is reproducible (the same sources give the same bytes, so the
# same bot version): generated code and objects go to a temporary directory
# that is left out of the binary's paths, and the binary is stripped.
set -euo pipefail
cd "$(dirname "$0")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 1. Generate the protobuf and gRPC code from the .proto copies in ./proto.
echo "[1/3] C++ code for proto/"
protoc -I proto --cpp_out="$work" --grpc_out="$work" \
    --plugin=protoc-gen-grpc="$(command -v grpc_cpp_plugin)" \
    kahuna/v1/game.proto kahuna/v1/referee.proto

# 2. Compile: no build paths or timestamps end up in the objects.
flags=(-std=c++17 -O2 -I"$work" -I. -ffile-prefix-map="$work"=gen -ffile-prefix-map="$PWD"=.
       -frandom-seed=kahuna -Wno-deprecated-declarations)
sources=(bot.cc kahuna.cc "$work"/kahuna/v1/game.pb.cc "$work"/kahuna/v1/referee.pb.cc
         "$work"/kahuna/v1/referee.grpc.pb.cc)
objects=() pids=()
echo "[2/3] compiling ${#sources[@]} files at once (about a minute)"
for source in "${sources[@]}"; do  # all at once: the generated files take longest
    object="$work/$(basename "$source" .cc).o"
    g++ "${flags[@]}" $(pkg-config --cflags grpc++_unsecure protobuf) -c "$source" -o "$object" &
    objects+=("$object") pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done

# 3. Link everything statically (grpc++_unsecure: no TLS, the referee speaks plain gRPC).
echo "[3/3] linking one static binary"
g++ -static -s -Wl,--build-id=none -o "$work/bot" "${objects[@]}" \
    $(pkg-config --static --libs grpc++_unsecure protobuf) -lre2 -lcares -laddress_sorting -lupb \
    2>"$work/link.log" || { cat "$work/link.log" >&2; exit 1; }
install -m 0755 "$work/bot" ./bot
echo "built $(pwd)/bot ($(stat -c %s bot) bytes)"
