#!/usr/bin/env bash
# Builds the llama.cpp that node-llama-cpp 3.22.1 bundles from source with CUDA (A100 = sm_80, H100 = sm_90)
# and rebuilds our addon against it. For GPU servers; CI does not run it (no GPU, and 2 cores take hours).
#
#   native/scripts/build-llama-cuda.sh [INSTALL_DIR]     (default: native/.cache/llama-cuda)
#
# Needs: the CUDA toolkit (nvcc on PATH), cmake ≥ 3.18, g++, git, and `npm ci` done in the repository.
# Then run with:  ATTR_RAG_LLAMA_LIB_DIR=<INSTALL_DIR>/lib  and load models with gpuLayers: -1.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$here/.cache/llama-cuda}"
archs="${CMAKE_CUDA_ARCHITECTURES:-80;90}"
command -v nvcc >/dev/null || { echo "nvcc not found: install the CUDA toolkit first" >&2; exit 1; }

# shellcheck source=llama-source.sh
. "$here/scripts/llama-source.sh"

cmake -S "$src" -B "$src/build-cuda" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$archs" -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DCMAKE_INSTALL_PREFIX="$out"
cmake --build "$src/build-cuda" --config Release -j "$(nproc)"
cmake --install "$src/build-cuda"
# ggml's dynamically loaded backends (libggml-cuda.so, libggml-cpu-*.so) live next to libggml.
libdir="$out/lib"
[ -d "$libdir" ] || libdir="$out/lib64"

cd "$here"
npx cmake-js compile --out build-cuda --CDLLAMA_ROOT="$src" --CDLLAMA_LIB_DIR="$libdir"
echo
echo "CUDA build ready. Use it with:"
echo "  ATTR_RAG_NATIVE_ADDON=$here/build-cuda/Release/attr_rag_native.node ATTR_RAG_LLAMA_LIB_DIR=$libdir <command>"
