#!/usr/bin/env bash
# Builds llama-server of the llama.cpp release node-llama-cpp 3.22.1 bundles (the release our addon and the npm
# libraries are built from) into .cache/llama-server/, for `attr-rag bench peers`. Offline: the source is the
# tarball's gitRelease.bundle (native/.cache), the web UI is neither downloaded nor built.
#
#   native/scripts/build-llama-server.sh          (about six minutes on 2 cores; CI does not run it)
#
# Only the server's own code (server, llama-common, mtmd, httplib) is compiled and used. At run time it loads
# the very libraries the addon and node-llama-cpp load: libllama, libggml and the CPU kernels of
# @node-llama-cpp/linux-x64 (and, for --gpu, libggml-cuda/-vulkan from their packages), so the three systems
# the bench compares compute with the same binaries. Needs cmake, g++, git, ninja or make, and `npm ci` done.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
out="$root/.cache/llama-server"
cpu="$root/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
[ -d "$cpu" ] || { echo "$cpu is missing: run npm ci first" >&2; exit 1; }

# shellcheck source=llama-source.sh
. "$here/scripts/llama-source.sh"

build="$src/build-server"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# No CPU backend is built (GGML_CPU=OFF, backends loaded at run time): the kernels come from the npm package.
cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DGGML_BACKEND_DL=ON -DGGML_CPU=OFF -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DCMAKE_BUILD_RPATH="\$ORIGIN"
cmake --build "$build" --target llama-server -j "$(nproc)"
bin="$(find "$build" -name llama-server -type f -perm -u+x | head -1)"
[ -n "$bin" ] || { echo "the build made no llama-server (see $build)" >&2; exit 1; }

rm -rf "$out" && mkdir -p "$out"
cp "$bin" "$out/llama-server"
# The server's own shared libraries (llama-common, mtmd, server parts) come from this build …
find "$build" -name '*.so*' \( -name 'libllama-common*' -o -name 'libmtmd*' -o -name 'libllama-server*' -o -name 'libserver*' -o -name 'libcpp-httplib*' \) -exec cp -P {} "$out/" \;
# … and everything that computes is the npm package's: each soname the server asks for points at it.
for so in $(readelf -d "$out/llama-server" "$out"/*.so* 2>/dev/null | sed -n 's/.*NEEDED.*\[\(lib\(llama\|ggml\)[^]]*\)\].*/\1/p' | sort -u); do
  [ -e "$out/$so" ] && continue
  case "$so" in
    libllama.so*) ln -sf "$cpu/libllama.v0.5.0.so" "$out/$so" ;;
    libggml.so*) ln -sf "$cpu/libggml.v0.5.0.so" "$out/$so" ;;
    libggml-base.so*) ln -sf "$cpu/libggml-base.so" "$out/$so" ;;
  esac
done
for k in "$cpu"/libggml-cpu-*.so; do ln -sf "$k" "$out/"; done
"$out/llama-server" --version >/dev/null 2>&1 || LD_LIBRARY_PATH="$out" "$out/llama-server" --version
echo
echo "llama-server is in $out; attr-rag bench peers finds it there."
