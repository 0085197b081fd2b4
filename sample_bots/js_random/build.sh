#!/usr/bin/env bash
# Installs the bot's dependencies (@grpc/grpc-js, @grpc/proto-loader) into
# ./node_modules, exactly as package-lock.json pins them. Needs Node 20+ and npm.
set -euo pipefail
cd "$(dirname "$0")"
echo "npm ci (packages pinned by package-lock.json)"
npm ci --no-audit --no-fund --loglevel=error
chmod -R a+rX .
echo "built $(pwd) (node_modules)"
