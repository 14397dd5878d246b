import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { GetStatsRequest, GetStatsResponse, INDEX_NATS_SERVICE, JOBS_STREAM, jobSubject, type NatsServiceInfo } from "@attr-rag/contracts";
import { afterAll, describe, expect, it } from "vitest";
import { connectNats, ConnectionWatch, ensureJobStreams, natsServerAvailable, natsServerMissing, NatsConnectError, RemoteError, requestProto, serveService, startNatsServer } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-nats-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STATS: NatsServiceInfo<"getStats"> = { ...INDEX_NATS_SERVICE, endpoints: { getStats: INDEX_NATS_SERVICE.endpoints.getStats } };
const codecs = { request: GetStatsRequest, response: GetStatsResponse };
const ask = (nc: Parameters<typeof requestProto>[0], o: Partial<Parameters<typeof requestProto>[4]> = {}) =>
  requestProto(nc, STATS.endpoints.getStats.subject, {}, codecs, { timeoutMs: 2_000, serviceLabel: "the index", startHint: "`attr-rag index serve --nats URL`", ...o });

/** Without nats-server the tests that need one skip, saying why; in CI (which installs it) that is a failure. */
const missing = natsServerMissing();

describe("nats - CI has nats-server", () => {
  it.skipIf(missing !== undefined && !process.env.CI)("nats - nats-server is installed (.ci/run installs Debian's package)", () => {
    expect(natsServerAvailable(), missing).toBe(true);
  });
});

describe.skipIf(missing !== undefined)(`nats plumbing${missing ? ` (skipped: ${missing})` : ""}`, () => {

  it("nats - a server starts on a free loopback port, survives a kill and restart on the same port and store, and clients reconnect", async () => {
    await using server = await startNatsServer();
    expect(server.url).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
    const nc = await connectNats({ url: server.url, name: "test" });
    const watch = new ConnectionWatch(nc);
    try {
      const jsm = await jetstreamManager(nc);
      await ensureJobStreams(jsm);
      await ensureJobStreams(jsm); // idempotent
      const js = jetstream(nc);
      const first = await js.publish(jobSubject("occlusion", "m"), new Uint8Array([1]), { msgID: "job-1" });
      const again = await js.publish(jobSubject("occlusion", "m"), new Uint8Array([1]), { msgID: "job-1" });
      expect(first.duplicate).toBe(false);
      expect(again.duplicate).toBe(true); // the same job id is stored once
      expect((await jsm.streams.info(JOBS_STREAM)).config.retention).toBe("workqueue");

      const lost = watch.lost;
      await server.kill();
      await expect.poll(() => lost.aborted, { timeout: 5_000 }).toBe(true);
      expect(watch.connected).toBe(false);
      await server.restart();
      await expect.poll(() => watch.connected, { timeout: 10_000 }).toBe(true);
      // The job published before the crash is still there (file storage).
      expect((await jsm.streams.info(JOBS_STREAM)).state.messages).toBe(1);
    } finally {
      await nc.close();
    }
  });

  it("nats - protobuf request/reply: answers, service errors with their code, no responders and a lost server are clear errors", async () => {
    await using server = await startNatsServer();
    const nc = await connectNats({ url: server.url, name: "client" });
    const sc = await connectNats({ url: server.url, name: "service" });
    const watch = new ConnectionWatch(nc);
    try {
      const none = await ask(nc).catch((e: unknown) => e);
      expect(none).toBeInstanceOf(RemoteError);
      expect((none as RemoteError).code).toBe(14);
      expect((none as RemoteError).message).toMatch(/the index is not running on NATS .*start it with `attr-rag index serve --nats URL`/);

      let fail = false;
      let block = false;
      const service = await serveService(
        sc,
        STATS,
        [
          {
            endpoint: STATS.endpoints.getStats,
            ...codecs,
            handle: async () => {
              if (block) await new Promise(() => {});
              if (fail) throw Object.assign(new Error("store is closed"), { code: 14 });
              return GetStatsResponse.fromPartial({ documents: 7, chunks: 9 });
            },
          },
        ],
        (err) => ({ code: (err as { code?: number }).code ?? 13, message: (err as Error).message }),
      );
      expect(await ask(nc)).toMatchObject({ documents: 7, chunks: 9 });
      fail = true;
      const failed = (await ask(nc).catch((e: unknown) => e)) as RemoteError;
      expect([failed.code, failed.message]).toEqual([14, "store is closed"]);

      // A server that dies mid-request ends the request at once, not at its timeout.
      block = true;
      const started = performance.now();
      const pending = ask(nc, { timeoutMs: 60_000, watch }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 100));
      await server.kill();
      const lost = (await pending) as RemoteError;
      expect(lost.code).toBe(14);
      expect(lost.message).toMatch(/connection to NATS was lost while waiting for the index/);
      expect(performance.now() - started).toBeLessThan(10_000);
      const whileDown = (await ask(nc, { watch }).catch((e: unknown) => e)) as RemoteError;
      expect(whileDown.message).toMatch(/no connection to NATS/);
      await service.stop().catch(() => {});
    } finally {
      await nc.close().catch(() => {});
      await sc.close().catch(() => {});
    }
  });

  it("nats - a role started while nats-server is down waits for it (saying so once) and connects when it is back; one refused is not kept waiting", async () => {
    await using server = await startNatsServer();
    await server.kill();
    const waiting: string[] = [];
    const connecting = connectNats({ url: server.url, name: "late", timeoutMs: 1_000, waitForServerMs: 60_000, onWaiting: (m) => waiting.push(m) });
    while (waiting.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(waiting[0]).toMatch(/^cannot reach NATS at nats:\/\/127\.0\.0\.1:\d+ .*; trying again for up to 60 s$/);
    await server.restart();
    const nc = await connecting;
    try {
      await nc.flush();
      expect(nc.isClosed()).toBe(false);
      expect(waiting).toHaveLength(1);
    } finally {
      await nc.close();
    }
    // Without the wait, the same unreachable server fails the first attempt.
    await server.kill();
    const now = await connectNats({ url: server.url, name: "now", timeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(now).toBeInstanceOf(NatsConnectError);
    expect((now as NatsConnectError).unreachable).toBe(true);
  });

  it("nats - credentials: a wrong password or a missing user is refused with a message naming the option", async () => {
    const config = join(dir, "auth.conf");
    writeFileSync(config, `authorization { users = [ { user: "worker", password: "s3cret" } ] }\n`);
    await using server = await startNatsServer({ configFile: config });
    const ok = await connectNats({ url: server.url, name: "ok", user: "worker", pass: "s3cret" });
    await ok.close();
    // A server that answers and refuses is never waited for, however long a role would wait for one that is down.
    const waited: string[] = [];
    const wrong = await connectNats({ url: server.url, name: "bad", user: "worker", pass: "nope", waitForServerMs: 60_000, onWaiting: (m) => waited.push(m) }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(NatsConnectError);
    expect((wrong as NatsConnectError).unreachable).toBe(false);
    expect(waited).toEqual([]);
    expect((wrong as Error).message).toMatch(/refused the credentials of --nats-user\/--nats-pass/);
    const anonymous = await connectNats({ url: server.url, name: "anon" }).catch((e: unknown) => e);
    expect((anonymous as Error).message).toMatch(/requires credentials: pass --nats-creds, --nats-nkey, --nats-token or --nats-user\/--nats-pass/);
    await expect(connectNats({ url: server.url, name: "x", user: "worker" })).rejects.toThrow(/--nats-user and --nats-pass go together/);
    await expect(connectNats({ url: server.url, name: "x", creds: join(dir, "none.creds") })).rejects.toThrow(/--nats-creds: cannot read/);
    await expect(connectNats({ url: "nats://127.0.0.1:1", name: "x", timeoutMs: 1_000 })).rejects.toThrow(/cannot reach NATS at nats:\/\/127\.0\.0\.1:1/);
  });

  it("nats - a first-connect error names the server without the URL's password, however it is written", async () => {
    for (const url of ["nats://a:s3cret@127.0.0.1:1", "nats://a:pa/ss@127.0.0.1:1", "nats://h:1,nats://a:p@ss%2Fx@127.0.0.1:1"]) {
      const err = (await connectNats({ url, name: "x", timeoutMs: 1_000 }).catch((e: unknown) => e)) as Error;
      expect(err, url).toBeInstanceOf(NatsConnectError);
      expect(err.message, url).toMatch(/nats:\/\/127\.0\.0\.1:1/);
      expect(err.message, url).not.toMatch(/s3cret|pa\/ss|p@ss|ss%2Fx|a:/);
    }
    const unencoded = (await connectNats({ url: "nats://a:pa/ss@127.0.0.1:1", name: "x", timeoutMs: 1_000 }).catch((e: unknown) => e)) as Error;
    expect(unencoded.message).toMatch(/not a valid URL .*percent-encoded/);
  });
});
