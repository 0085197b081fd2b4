#!/usr/bin/env bash
# Builds bot.jar and native/: `mvn package` generates the Java code for proto/
# (protoc and protoc-gen-grpc-java from Maven Central), compiles it and shades it
# with only the dependency classes it can reach into one jar (fixed entry times:
# a rebuild is byte-identical); Netty's epoll library goes to native/ as a file.
# Needs a JDK 17+ and Maven 3.6+.
set -euo pipefail
cd "$(dirname "$0")"
echo "[1/2] mvn package (the first build downloads grpc-java and protoc: minutes)"
mvn -B -q package -DskipTests
echo "[2/2] bot.jar and its native libraries"
rm -rf lib native
install -m 0644 target/java-random.jar bot.jar
install -d -m 0755 native
install -m 0644 target/native/META-INF/native/*.so native/
rm -rf target # the arena hashes (and would ship) every file of the bot directory
chmod -R a+rX .
echo "built $(pwd)/bot.jar"
