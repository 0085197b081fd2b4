#!/usr/bin/env bash
# Builds the bot: installs the locked dependencies (npm ci), generates the
# TypeScript types of the protocol from ./proto into src/gen, compiles src/
# to dist/ with tsc, then drops the build-only packages (typescript) so that
# the directory you ship holds only what `node dist/bot.js` runs. Needs Node
# 20 with npm. The same sources and lockfile give the same files (so the
# same bot version) on every rebuild.
set -euo pipefail
cd "$(dirname "$0")"
echo "[1/3] npm ci (packages pinned by package-lock.json)"
npm ci --no-audit --no-fund --loglevel=error
rm -rf dist src/gen
echo "[2/3] types for proto/ and tsc"
npm run --silent build
echo "[3/3] dropping the build-only packages"
npm prune --omit=dev --no-audit --no-fund --loglevel=error
chmod -R a+rX .
echo "built $(pwd)/dist/bot.js"
