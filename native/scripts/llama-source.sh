# Sourced by the CUDA build scripts: sets $src to the llama.cpp source node-llama-cpp 3.22.1 bundles (the
# release our addon and the npm libraries are built from), cloned once into native/.cache/llama.cpp-src.
# Expects $here = the native/ folder.
node "$here/scripts/prepare-llama.mjs"
src="$here/.cache/llama.cpp-src"
if [ ! -f "$src/CMakeLists.txt" ]; then
  rm -rf "$src"
  tar -xzf "$here/.cache/node-llama-cpp-3.22.1.tgz" -C "$here/.cache" package/llama/gitRelease.bundle
  git clone --quiet "$here/.cache/package/llama/gitRelease.bundle" "$src"
  rm -rf "$here/.cache/package"
fi
