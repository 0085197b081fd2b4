#!/usr/bin/env bash
# Builds ./bot: cargo generates the Rust code for proto/ in build.rs (prost and
# tonic, with the protoc that the protoc-bin-vendored crate ships), then builds a
# static, reproducible release binary. Needs cargo (Rust 1.88+).
set -euo pipefail
cd "$(dirname "$0")"
here="$(pwd -P)"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
# Compiled outside the bot directory (the arena hashes every file in it).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${KAHUNA_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kahuna-kits}/rust-target}"
# Static glibc (no libc needed at run time), and no build paths in the binary:
# a rebuild of the same sources is byte-identical, so the arena sees the same version.
# --target: RUSTFLAGS then apply to the bot's crates only, not to build scripts and
# proc macros. The bot directory's own path is remapped for the bot crate alone
# (after --), so a copy built elsewhere reuses the compiled dependencies.
export RUSTFLAGS="-C target-feature=+crt-static --remap-path-prefix=$cargo_home=/cargo --remap-path-prefix=$CARGO_TARGET_DIR=/target"
target="$(rustc -vV | sed -n 's/^host: //p')"
echo "cargo build (the first build downloads and compiles tonic and prost: minutes)"
cargo rustc --release --locked --target "$target" --bin kahuna_bot -- --remap-path-prefix="$here=/bot"
install -m 0755 "$CARGO_TARGET_DIR/$target/release/kahuna_bot" bot
chmod -R a+rX .
echo "built $(pwd)/bot"
