#!/usr/bin/env bash
# Builds bot.jar and lib/: `mvn package` generates the Java code for proto/
# (protoc and protoc-gen-grpc-java from Maven Central), compiles it and writes the
# jar (fixed entry times: a rebuild is byte-identical) with its dependencies.
# Needs a JDK 17+ and Maven 3.6+.
set -euo pipefail
cd "$(dirname "$0")"
mvn -B -q package -DskipTests
rm -rf lib
install -m 0644 target/java-random.jar bot.jar
cp -r target/lib lib
rm -rf target # the arena hashes (and would ship) every file of the bot directory
chmod -R a+rX .
