import { connectNats, natsServerMissing, startNatsServer } from "@attr-rag/nats";
import { describe, expect, it } from "vitest";
import { checkClusterPassword, LocalCluster, NATS_CONFIG, newClusterPassword, ROLES } from "@attr-rag/cluster";
import { TEST_MODEL } from "./helpers/runCli.js";

const missing = natsServerMissing();
const env = (passwords: Record<string, string>) => Object.fromEntries(ROLES.map((r) => [`ATTR_RAG_${r.toUpperCase()}_PASSWORD`, passwords[r]!]));

describe("cluster passwords", () => {
  it("cluster passwords - generated ones are distinct and always pass the check", () => {
    const many = Array.from({ length: 5000 }, newClusterPassword);
    expect(new Set(many).size).toBe(many.length);
    for (const p of many) expect(() => checkClusterPassword("gateway", p)).not.toThrow();
  });

  it("cluster passwords - ones nats-server would misread are refused naming the role, before anything starts", async () => {
    for (const bad of ["1e5Zq9x8w7", "true", "has a space", "short", "-leading-dash", "quote\"d-pass"]) {
      expect(() => checkClusterPassword("selector", bad)).toThrow(/NATS password for selector .*letter first/);
    }
    const passwords = { gateway: "gw-secret", worker: "wk-secret", selector: "1e5Zq9x8w7", index: "ix-secret" };
    await expect(LocalCluster.start({ store: "/nonexistent", workers: 1, modelPath: TEST_MODEL, passwords })).rejects.toThrow(/NATS password for selector/);
  });

  it.skipIf(missing !== undefined)(`cluster passwords - nats-server starts with generated passwords (digits right after the prefix included) and each role logs in with its own${missing ? ` (skipped: ${missing})` : ""}`, async () => {
    // The shape that broke a CI run: a password whose random part reads as a number.
    const passwords = { gateway: "ar-1e5abcdef", worker: newClusterPassword(), selector: "ar-0123456789", index: newClusterPassword() };
    for (const role of ROLES) checkClusterPassword(role, passwords[role]);
    await using server = await startNatsServer({ configFile: NATS_CONFIG, env: env(passwords) });
    for (const role of ROLES) {
      const nc = await connectNats({ url: server.url, name: `test-${role}`, user: role, pass: passwords[role] });
      expect(nc.info?.server_name ?? nc.getServer()).toBeTruthy();
      await nc.close();
    }
    await expect(connectNats({ url: server.url, name: "test-wrong", user: "gateway", pass: passwords.worker, timeoutMs: 2000 })).rejects.toThrow();
  }, 30_000);
});
