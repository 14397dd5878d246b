// Locates the proto toolchain (buf, protoc-gen-ts_proto) and the protos/ directory from this package,
// so generate.mjs and the tests work from a fresh clone after `npm ci`, wherever npm hoisted things.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);

/** packages/contracts */
export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** Repository root (the npm workspace root). */
export const REPO_ROOT = resolve(PACKAGE_DIR, "../..");
/** Buf module root: buf.yaml, buf.gen.yaml and attr_rag/v1/*.proto. */
export const PROTOS_DIR = join(REPO_ROOT, "protos");
/** Generated TypeScript (git-ignored). */
export const GEN_DIR = join(PACKAGE_DIR, "src", "gen");

/** Thrown when a tool is missing or fails; `message` says what to do. */
export class ToolchainError extends Error {
  name = "ToolchainError";
}

/** Absolute path of a package's bin script, or a ToolchainError naming the package to install. */
export function resolveBin(packageName, binName) {
  let manifestPath;
  try {
    manifestPath = require.resolve(`${packageName}/package.json`);
  } catch (cause) {
    throw new ToolchainError(
      `${packageName} is not installed (needed for ${binName}); run \`npm ci\` at the repository root.`,
      { cause },
    );
  }
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  const rel = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.[binName];
  const binPath = rel === undefined ? undefined : resolve(dirname(manifestPath), rel);
  if (binPath === undefined || !existsSync(binPath)) {
    throw new ToolchainError(`${packageName} does not provide the ${binName} binary at ${binPath ?? "(no bin entry)"}.`);
  }
  return binPath;
}

/** The buf CLI (a Node launcher for the platform binary from @bufbuild/buf-<platform>). */
export function resolveBuf() {
  return resolveBin("@bufbuild/buf", "buf");
}

/** The ts-proto protoc plugin. */
export function resolveTsProtoPlugin() {
  return resolveBin("ts-proto", "protoc-gen-ts_proto");
}

/**
 * Runs buf with `args` in `cwd` (default protos/) and returns its result; never throws for a non-zero
 * exit. `extraPath` directories go first on PATH (that is how buf finds local plugins).
 */
export function runBuf(args, { cwd = PROTOS_DIR, extraPath = [] } = {}) {
  const pathKey = Object.keys(process.env).find((k) => k.toUpperCase() === "PATH") ?? "PATH";
  const env = { ...process.env, [pathKey]: [...extraPath, process.env[pathKey] ?? ""].join(process.platform === "win32" ? ";" : ":") };
  const result = spawnSync(process.execPath, [resolveBuf(), ...args], { cwd, env, encoding: "utf8" });
  if (result.error) throw new ToolchainError(`could not start buf: ${result.error.message}`, { cause: result.error });
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}
