#!/usr/bin/env node
// Regenerates packages/contracts/src/gen/ from protos/: `buf lint` (STANDARD + COMMENTS), then
// `buf generate` with protos/buf.gen.yaml, the one place where the ts-proto options are pinned.
// src/gen/ (and dist/) are deleted first, so removed protos never leave stale output behind. Never edit src/gen/.
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { GEN_DIR, PACKAGE_DIR, PROTOS_DIR, REPO_ROOT, ToolchainError, resolveTsProtoPlugin, runBuf } from "./toolchain.mjs";

/** A file every consumer needs; its absence means generation silently produced nothing useful. */
const SENTINEL = join(GEN_DIR, "attr_rag", "v1", "attr_rag_service.ts");

function fail(message) {
  console.error(`contracts: ${message}`);
  process.exit(1);
}

function countTs(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile() && e.name.endsWith(".ts")).length;
}

try {
  for (const file of ["buf.yaml", "buf.gen.yaml"]) {
    if (!existsSync(join(PROTOS_DIR, file))) fail(`missing ${join(PROTOS_DIR, file)}`);
  }
  const plugin = resolveTsProtoPlugin();

  const lint = runBuf(["lint"]);
  if (lint.status !== 0) {
    fail(`buf lint failed (protos/buf.yaml: STANDARD + COMMENTS):\n${lint.stdout}${lint.stderr}`);
  }

  // dist/ goes too: tsc never deletes outputs, so a removed proto would otherwise leave stale .js/.d.ts.
  rmSync(join(PACKAGE_DIR, "dist"), { recursive: true, force: true });
  rmSync(GEN_DIR, { recursive: true, force: true });
  mkdirSync(GEN_DIR, { recursive: true });
  const gen = runBuf(["generate", "--template", "buf.gen.yaml"], { extraPath: [dirname(plugin)] });
  if (gen.status !== 0) fail(`buf generate failed:\n${gen.stdout}${gen.stderr}`);
  if (!existsSync(SENTINEL)) fail(`buf generate succeeded but ${relative(REPO_ROOT, SENTINEL)} is missing`);

  console.log(`contracts: generated ${countTs(GEN_DIR)} files in ${relative(REPO_ROOT, GEN_DIR)}`);
} catch (error) {
  if (error instanceof ToolchainError) fail(error.message);
  throw error;
}
