#!/usr/bin/env bash
# Builds only ggml's CUDA backend (libggml-cuda.so) of the llama.cpp release node-llama-cpp 3.22.1 bundles,
# for the GPU architectures you name, and puts it where `--gpu cuda` loads it from: the
# @node-llama-cpp/linux-x64-cuda package folder (the prebuilt file is kept beside it as libggml-cuda.so.npm).
# For a driver whose CUDA is older than the toolchain the npm package was built with: that package ships
# machine code for sm_86, sm_89, sm_120a and sm_121a only, and PTX that such a driver refuses to compile
# ("the provided PTX was compiled with an unsupported toolchain"), so H100/H200 (sm_90) or A100 (sm_80)
# under e.g. a CUDA 13.0 driver need this. The addon and the CPU libraries stay as npm installed them.
#
#   CMAKE_CUDA_ARCHITECTURES=90-real native/scripts/build-ggml-cuda.sh      (default: 80-real;90-real)
#
# Needs: nvcc (any CUDA 13 toolkit the driver supports), cmake ≥ 3.18, ninja or make, g++, git, and
# `npm ci` plus `npm install --no-save @node-llama-cpp/linux-x64-cuda@3.22.1` done in the repository.
# On a 16-core machine the sm_90 build took about four minutes. CI does not run it (no GPU, no nvcc).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
archs="${CMAKE_CUDA_ARCHITECTURES:-80-real;90-real}"
pkg="$root/node_modules/@node-llama-cpp/linux-x64-cuda/bins/linux-x64-cuda"
command -v nvcc >/dev/null || { echo "nvcc not found: install the CUDA toolkit (or put its bin/ on PATH) first" >&2; exit 1; }
[ -d "$pkg" ] || { echo "$pkg is missing: npm install --no-save @node-llama-cpp/linux-x64-cuda@3.22.1 first" >&2; exit 1; }

# shellcheck source=llama-source.sh
. "$here/scripts/llama-source.sh"

build="$src/build-ggml-cuda"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# Only the backend module: no CPU backend, no llama library, no tools. It links libggml-base, which at run
# time is the one the addon already loaded from the CPU package (same release, same ABI).
cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DGGML_BACKEND_DL=ON -DGGML_CPU=OFF -DGGML_NATIVE=OFF -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$archs" \
  -DGGML_CUDA_NCCL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
  -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF
cmake --build "$build" --target ggml-cuda -j "$(nproc)"
so="$(find "$build" -name libggml-cuda.so | head -1)"
[ -n "$so" ] || { echo "the build made no libggml-cuda.so (see $build)" >&2; exit 1; }
[ -f "$pkg/libggml-cuda.so.npm" ] || [ ! -f "$pkg/libggml-cuda.so" ] || cp "$pkg/libggml-cuda.so" "$pkg/libggml-cuda.so.npm"
cp "$so" "$pkg/libggml-cuda.so"
echo
echo "libggml-cuda.so for $archs is in $pkg (the npm one kept as libggml-cuda.so.npm)."
echo "Check it with:  npx attr-rag doctor --gpu cuda"
