#!/usr/bin/env node
// Puts the llama.cpp headers (and the vocab-only GGUFs the synthetic test models use) that match the
// prebuilt libraries of @node-llama-cpp/linux-x64 into native/.cache/llama.cpp.
// They come from node-llama-cpp's own tarball (its llama/gitRelease.bundle is the exact llama.cpp source
// the prebuilt libraries were built from). We fetch that tarball with `npm pack` instead of depending on
// node-llama-cpp, because installing it pulls ~725 MB of optional CUDA/Vulkan builds we do not use.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const NODE_LLAMA_CPP_VERSION = "3.22.1";
const INTEGRITY =
  "sha512-bltIipuWmc123H7tMIgDGKSsSrhmhlQYeVUC48XTjVW7XGJJiJJyCdlTMzQ/LiWoPkGDpcL4FviDpgw7qfTiDw==";
// Paths of the llama.cpp tree we need: public headers, vocab-only GGUFs for synthetic models.
const PATHS = ["include", "ggml/include", "models/ggml-vocab-qwen2.gguf", "models/ggml-vocab-llama-spm.gguf", "models/ggml-vocab-bert-bge.gguf", "LICENSE"];

const nativeDir = resolve(import.meta.dirname, "..");
const cacheDir = join(nativeDir, ".cache");
const llamaDir = join(cacheDir, "llama.cpp");
const stamp = join(llamaDir, ".attr-rag-stamp");
const stampText = `${NODE_LLAMA_CPP_VERSION}\n${PATHS.join("\n")}\n`;

function run(cmd, args, opts = {}) {
  try {
    return execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", ...opts });
  } catch (err) {
    throw new Error(`prepare-llama: \`${cmd} ${args.join(" ")}\` failed: ${err.stderr || err.message}`);
  }
}

if (existsSync(stamp) && readFileSync(stamp, "utf8") === stampText) {
  console.log("prepare-llama: llama.cpp headers already in place");
  process.exit(0);
}

mkdirSync(cacheDir, { recursive: true });
const tarball = join(cacheDir, `node-llama-cpp-${NODE_LLAMA_CPP_VERSION}.tgz`);
if (!existsSync(tarball)) {
  console.log(`prepare-llama: fetching node-llama-cpp@${NODE_LLAMA_CPP_VERSION} from the npm registry (headers only)`);
  const out = run("npm", ["pack", `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`, "--pack-destination", cacheDir, "--silent"]);
  const name = out.trim().split("\n").pop();
  if (!name || !existsSync(join(cacheDir, name))) throw new Error(`prepare-llama: npm pack produced no tarball (${out})`);
}
const digest = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
if (digest !== INTEGRITY) {
  rmSync(tarball, { force: true });
  throw new Error(`prepare-llama: ${tarball} does not match the pinned integrity; deleted it, run the build again`);
}

const extractDir = join(cacheDir, "extract");
rmSync(extractDir, { recursive: true, force: true });
mkdirSync(extractDir, { recursive: true });
run("tar", ["-xzf", tarball, "-C", extractDir, "package/llama/gitRelease.bundle"]);
const bundle = join(extractDir, "package/llama/gitRelease.bundle");

rmSync(llamaDir, { recursive: true, force: true });
run("git", ["clone", "--quiet", "--no-checkout", bundle, llamaDir]);
run("git", ["-C", llamaDir, "-c", "advice.detachedHead=false", "checkout", "HEAD", "--", ...PATHS]);
rmSync(extractDir, { recursive: true, force: true });
if (!existsSync(join(llamaDir, "include/llama.h"))) throw new Error("prepare-llama: include/llama.h missing after checkout");
writeFileSync(stamp, stampText);
console.log(`prepare-llama: llama.cpp headers ready in ${llamaDir} (${readdirSync(join(llamaDir, "include")).join(", ")})`);
