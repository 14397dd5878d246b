import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { batchConcurrencyOf, CONFIG_KEYS, ConfigError, DEFAULT_CONFIG, DISTRIBUTED_MAX_CONCURRENT_ASKS, envName, flagName, loadConfig } from "../src/index.js";
import { REPO_ROOT } from "./helpers/demoStore.js";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(content: string): string {
  const path = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, content);
  return path;
}

const base = { store: "/s", model: "/m.gguf" };

describe("gateway config", () => {
  it("config - defaults apply and store/model are required, naming every way to set them", () => {
    const c = loadConfig({ overrides: base });
    expect(c.k).toBe(DEFAULT_CONFIG.k);
    expect(c.metrics).toEqual(["cosine", "jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"]);
    expect(() => loadConfig({ overrides: { model: "/m" } })).toThrow(/--store.*ATTR_RAG_STORE.*config file/);
  });

  it("config - flags override env, env overrides the file, the file overrides defaults", () => {
    const f = file(JSON.stringify({ ...base, k: 10, tau: 0.2 }));
    expect(loadConfig({ file: f }).k).toBe(10);
    expect(loadConfig({ file: f, env: { ATTR_RAG_K: "20" } }).k).toBe(20);
    const c = loadConfig({ file: f, env: { ATTR_RAG_K: "20" }, overrides: { k: "40" } });
    expect(c.k).toBe(40);
    expect(c.tau).toBe(0.2);
    expect(loadConfig({ env: { ATTR_RAG_STORE: "/e", ATTR_RAG_MODEL: "/m", ATTR_RAG_MAX_QUEUED_ASKS: "3" } })).toMatchObject({ store: "/e", maxQueuedAsks: 3 });
  });

  it("config - bad values are refused with the source and the allowed range", () => {
    expect(() => loadConfig({ file: file(JSON.stringify({ ...base, kk: 3 })) })).toThrow(/unknown setting "kk"/);
    expect(() => loadConfig({ overrides: base, env: { ATTR_RAG_TAU: "-1" } })).toThrow(/ATTR_RAG_TAU: tau must be a number in 0 or more/);
    expect(() => loadConfig({ overrides: { ...base, sequences: "1" } })).toThrow(/--sequences: sequences must be an integer in 2\.\.256/);
    expect(() => loadConfig({ overrides: { ...base, k: "3.5" } })).toThrow(ConfigError);
    // A sharded index is a distributed-mode setting, and its count is bounded like --shard's.
    expect(() => loadConfig({ overrides: { ...base, indexShards: "2" } })).toThrow(/indexShards is for distributed mode/);
    expect(loadConfig({ overrides: { model: "m", nats: "nats://127.0.0.1:4222", indexShards: "3" } }).indexShards).toBe(3);
    expect(() => loadConfig({ overrides: { model: "m", nats: "nats://127.0.0.1:4222", indexShards: "65" } })).toThrow(/--index-shards/);
    expect(() => loadConfig({ overrides: { ...base, metrics: "cosine,bogus" } })).toThrow(/metrics must be a non-empty list/);
    expect(() => loadConfig({ overrides: { ...base, strategy: "fast" } })).toThrow(/naive, prefix-shared, speculative/);
    expect(() => loadConfig({ file: file("{not json") })).toThrow(/not valid JSON/);
    expect(() => loadConfig({ file: file("[1]") })).toThrow(/JSON object/);
    expect(() => loadConfig({ file: join(dir, "missing.json") })).toThrow(/cannot read config file/);
    expect(() => loadConfig({ overrides: { ...base, tlsCert: "/c.pem" } })).toThrow(/both tlsCert and tlsKey/);
    expect(loadConfig({ overrides: { ...base, metrics: "rouge1, rouge1,jaccard" } }).metrics).toEqual(["rouge1", "jaccard"]);
  });

  it("config - distributed, the JetStream queue is the queue: many Asks at once unless a source says otherwise", () => {
    const nats = { nats: "nats://127.0.0.1:4222", model: "stories260K" };
    expect(loadConfig({ overrides: base }).maxConcurrentAsks).toBe(1);
    expect(loadConfig({ overrides: nats }).maxConcurrentAsks).toBe(DISTRIBUTED_MAX_CONCURRENT_ASKS);
    expect(loadConfig({ overrides: { ...nats, maxConcurrentAsks: "3" } }).maxConcurrentAsks).toBe(3);
    expect(loadConfig({ overrides: nats, env: { ATTR_RAG_MAX_CONCURRENT_ASKS: "1" } }).maxConcurrentAsks).toBe(1);
    expect(loadConfig({ file: file(JSON.stringify({ ...nats, maxConcurrentAsks: 1 })) }).maxConcurrentAsks).toBe(1);
    expect(() => loadConfig({ overrides: { ...nats, stateDir: "/var/lib/attr-rag" } })).toThrow(/stateDir is for embedded mode; with nats, batches live in JetStream/);
    // With nats the re-ranker is the id the workers serve it under, never a file.
    expect(loadConfig({ overrides: { ...nats, reranker: "bge-reranker-v2-m3" } }).reranker).toBe("bge-reranker-v2-m3");
    expect(loadConfig({ overrides: nats, env: { ATTR_RAG_RERANKER: "rr" } }).reranker).toBe("rr");
    expect(() => loadConfig({ overrides: { ...nats, reranker: "models/bge-reranker.gguf" } })).toThrow(
      /with nats, reranker is the re-ranker id the workers serve \(attr-rag worker --reranker R\.gguf --reranker-id ID\), not a path: got "models\/bge-reranker\.gguf"/,
    );
    expect(batchConcurrencyOf(loadConfig({ overrides: base }))).toBe(1);
    expect(batchConcurrencyOf(loadConfig({ overrides: { ...base, maxConcurrentAsks: "2" } }))).toBe(2);
    expect(batchConcurrencyOf(loadConfig({ overrides: { ...base, batchConcurrency: "0" } }))).toBe(0);
    expect(() => loadConfig({ overrides: { ...base, maxMessageBytes: "1000" } })).toThrow(/maxMessageBytes must be an integer in 4194304\.\./);
  });

  it("config - env and flag names follow the keys", () => {
    expect(envName("maxQueuedAsks")).toBe("ATTR_RAG_MAX_QUEUED_ASKS");
    expect(flagName("maxQueuedAsks")).toBe("max-queued-asks");
  });

  it("config - the configuration table (docs/asking.md) lists every setting with its env variable", () => {
    const readme = readFileSync(join(REPO_ROOT, "docs/asking.md"), "utf8");
    for (const key of Object.keys(CONFIG_KEYS)) {
      expect(readme, key).toContain(`| \`${key}\` | \`${envName(key)}\` |`);
    }
  });
});
