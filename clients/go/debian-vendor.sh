#!/bin/sh
# Lets the go command build this module offline from Debian's Go packages (/usr/share/gocode/src): vendor/
# (git-ignored) links to their sources, and vendor/modules.txt marks every requirement of go.mod as vendored.
# Vendor mode reads no other go.mod, so grpc's requirements that Debian does not package (envoyproxy, udpa, ...)
# are never looked up. Online, skip this: delete vendor/ and let the go command fetch the modules.
set -eu
cd "$(dirname "$0")"
src=/usr/share/gocode/src
if [ ! -d "$src/google.golang.org/grpc" ] || [ ! -d "$src/google.golang.org/protobuf" ]; then
  echo "debian-vendor.sh: Debian's Go sources are missing: apt-get install -y golang-go golang-google-grpc-dev golang-google-protobuf-dev" >&2
  exit 1
fi
rm -rf vendor
mkdir vendor
for host in "$src"/*; do
  ln -s "$host" "vendor/$(basename "$host")"
done
# "# <module> <version>" and "## explicit" for each require line, inside a require block or not.
awk '/^require \(/ { block = 1; next }
     block && /^\)/ { block = 0; next }
     block && NF >= 2 { print "# " $1 " " $2; print "## explicit" }
     /^require [^(]/ { print "# " $2 " " $3; print "## explicit" }' go.mod > vendor/modules.txt
