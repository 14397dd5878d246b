#!/bin/sh
# Generates the Go code for protos/attr_rag/v1 into gen/ (git-ignored) with the repository's pinned buf and the
# protoc-gen-go / protoc-gen-go-grpc plugins on PATH; buf.gen.yaml holds the options.
set -eu
cd "$(dirname "$0")"
buf=../../node_modules/.bin/buf
if [ ! -x "$buf" ]; then
  buf=$(command -v buf || true)
fi
if [ -z "$buf" ]; then
  echo "generate.sh: buf not found: run 'npm ci' in the repository root (it pins buf), or put buf on PATH" >&2
  exit 1
fi
for plugin in protoc-gen-go protoc-gen-go-grpc; do
  if ! command -v "$plugin" >/dev/null; then
    echo "generate.sh: $plugin not on PATH: apt-get install -y protoc-gen-go protoc-gen-go-grpc (Debian), or go install it" >&2
    exit 1
  fi
done
"$buf" generate
