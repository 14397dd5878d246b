import { randomBytes, webcrypto } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseWebhookSecret, webhookHeaders } from "../src/webhooks/signWebhook.js";
import { ipv6Bytes, ipv6Text } from "../src/webhooks/addressBytes.js";
import { attemptWebhook } from "../src/webhooks/attemptWebhook.js";
import { isInternalAddress, resolveWebhookTarget, WebhookTargetRefused } from "../src/webhooks/webhookTarget.js";

// The building blocks of batch webhooks: Standard Webhooks signatures and the refusal of internal targets.
describe("webhook signatures and targets", () => {
  it("webhooks - the signature verifies with an independent HMAC (WebCrypto) over id.timestamp.body; another body does not", async () => {
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const key = parseWebhookSecret(secret, "test");
    const body = JSON.stringify({ id: "evt_1", type: "batch.completed", data: { id: "b1" } });
    const headers = webhookHeaders(key, "evt_1", 1_700_000_000, body);
    expect(headers["webhook-id"]).toBe("evt_1");
    expect(headers["webhook-timestamp"]).toBe("1700000000");
    const [version, signature] = headers["webhook-signature"]!.split(",");
    expect(version).toBe("v1");
    const hmac = await webcrypto.subtle.importKey("raw", Buffer.from(secret.slice(6), "base64"), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    const verify = (text: string) => webcrypto.subtle.verify("HMAC", hmac, Buffer.from(signature!, "base64"), new TextEncoder().encode(text));
    expect(await verify(`evt_1.1700000000.${body}`)).toBe(true);
    expect(await verify(`evt_1.1700000000.${body} `)).toBe(false);
    expect(await verify(`evt_2.1700000000.${body}`)).toBe(false);
  });

  it("webhooks - a secret is whsec_ and base64 of at least 24 bytes", () => {
    expect(parseWebhookSecret(`whsec_${Buffer.alloc(24, 7).toString("base64")}`, "f")).toHaveLength(24);
    expect(parseWebhookSecret(Buffer.alloc(32, 1).toString("base64"), "f")).toHaveLength(32);
    expect(() => parseWebhookSecret("whsec_c2hvcnQ=", "secret.txt")).toThrow(/^secret\.txt: the webhook signing secret must be .*at least 24 random bytes/);
    expect(() => parseWebhookSecret("whsec_not base64!", "f")).toThrow(/signing secret/);
    expect(() => parseWebhookSecret("", "f")).toThrow(/signing secret/);
  });

  it("webhooks - loopback, private, link-local (the metadata service), unique-local and mapped addresses are internal; public ones are not", () => {
    for (const a of ["127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "not-an-ip"]) {
      expect(isInternalAddress(a), a).toBe(true);
    }
    for (const a of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"]) expect(isInternalAddress(a), a).toBe(false);
  });

  it("webhooks - targets: 127.0.0.1, 169.254.169.254 and localhost are refused unless allowed; only http(s), no credentials in the URL", async () => {
    await expect(resolveWebhookTarget("http://127.0.0.1:8080/hook", [])).rejects.toThrow(/internal address.*webhookAllowedHosts, serve --webhook-allowed-hosts/);
    await expect(resolveWebhookTarget("http://169.254.169.254/latest/meta-data", [])).rejects.toThrow(/internal address/);
    await expect(resolveWebhookTarget("http://[::1]:9/x", [])).rejects.toThrow(/internal address/);
    await expect(resolveWebhookTarget("http://localhost:9/x", [])).rejects.toThrow(/localhost is (127\.0\.0\.1|::1), an internal address/);
    expect(await resolveWebhookTarget("http://127.0.0.1:8080/hook", ["127.0.0.1"])).toMatchObject({ address: "127.0.0.1", family: 4 });
    expect(await resolveWebhookTarget("https://93.184.216.34/hook", [])).toMatchObject({ address: "93.184.216.34" });
    await expect(resolveWebhookTarget("ftp://93.184.216.34/x", [])).rejects.toThrow(/must be http or https, not ftp/);
    await expect(resolveWebhookTarget("https://user:pw@93.184.216.34/x", [])).rejects.toThrow(/must not carry credentials/);
    await expect(resolveWebhookTarget("not a url", [])).rejects.toThrow(/is not a URL/);
  });

  it("webhooks - IPv6 addresses that carry a blocked IPv4 address are internal: mapped (dotted or hex), NAT64, 6to4, Teredo, IPv4-compatible", async () => {
    expect(ipv6Text(ipv6Bytes("::ffff:127.0.0.1"))).toBe("0:0:0:0:0:ffff:7f00:1");
    expect(ipv6Text(ipv6Bytes("2002:7f00:1::1%eth0"))).toBe("2002:7f00:1:0:0:0:0:1");
    const internal = [
      ["::ffff:7f00:1", "mapped 127.0.0.1, as URL parsers write it"],
      ["::ffff:a9fe:a9fe", "mapped 169.254.169.254"],
      ["64:ff9b::7f00:1", "NAT64 of 127.0.0.1"],
      ["64:ff9b::127.0.0.1", "NAT64 of 127.0.0.1, dotted"],
      ["64:ff9b::a00:1", "NAT64 of 10.0.0.1"],
      ["64:ff9b:1::808:808", "local-use NAT64 (a translator inside the network)"],
      ["2002:7f00:1::", "6to4 of 127.0.0.1"],
      ["2002:7f00:0001:0:0:0:0:1", "6to4 of 127.0.0.1, written out"],
      ["2002:a9fe:a9fe::1", "6to4 of 169.254.169.254"],
      ["2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo, client 127.0.0.1"],
      ["::127.0.0.1", "IPv4-compatible 127.0.0.1"],
      ["::7f00:1", "IPv4-compatible 127.0.0.1, hex"],
      ["::8.8.8.8", "IPv4-compatible (deprecated, never routed)"],
      ["fec0::1", "site-local"],
      ["fe80::1%eth0", "link-local with a zone"],
    ];
    for (const [a, what] of internal) expect(isInternalAddress(a!), `${a} (${what})`).toBe(true);
    for (const a of ["64:ff9b::808:808", "64:ff9b::8.8.8.8", "2002:808:808::1", "::ffff:808:808", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"]) expect(isInternalAddress(a), a).toBe(false);
    // The same through a URL, which the WHATWG parser rewrites (::ffff:127.0.0.1 becomes ::ffff:7f00:1).
    expect(new URL("http://[::ffff:127.0.0.1]/").hostname).toBe("[::ffff:7f00:1]");
    for (const url of ["http://[::ffff:127.0.0.1]/hook", "http://[64:ff9b::127.0.0.1]/hook", "http://[64:ff9b::7f00:1]:8080/hook", "http://[2002:7f00:0001::1]/hook", "http://[::127.0.0.1]/hook", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook"]) {
      const refused = await resolveWebhookTarget(url, []).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused, url).toBeInstanceOf(WebhookTargetRefused);
      expect((refused as Error).message, url).toMatch(/an internal address/);
    }
    expect(await resolveWebhookTarget("http://[64:ff9b::808:808]/hook", [])).toMatchObject({ address: "64:ff9b::808:808", family: 6 });
    expect(await resolveWebhookTarget("http://[2002:808:808::1]/hook", [])).toMatchObject({ address: "2002:808:808::1", family: 6 });
  });

  it("webhooks - an attempt: a host that does not resolve is retried with the backoff, and given up only once webhookRetryFor has passed; a refused target is given up at once", async () => {
    const o = { key: randomBytes(32), allowedHosts: [], retryForMs: 60_000, backoffMs: 1_000, attemptTimeoutMs: 5_000 };
    // Under the reserved .invalid TLD (RFC 6761) the resolver answers that the name does not exist; a resolver
    // that hangs instead (no DNS server) ends at the attempt's deadline: a failed attempt all the same.
    const event = { id: "evt_batch_p_ended", batchId: "p", url: "http://receiver.invalid/hooks", body: "{}", createdMs: Date.now() };
    const lookupFailed = /^(webhook_url host receiver\.invalid does not resolve \([A-Z_]+\)|no complete answer within 5 s)/;
    expect(await attemptWebhook(event, 1, o)).toEqual({ kind: "retry", delayMs: 1_000, error: expect.stringMatching(lookupFailed) });
    expect(await attemptWebhook(event, 3, o)).toEqual({ kind: "retry", delayMs: 4_000, error: expect.stringMatching(lookupFailed) });
    const late = await attemptWebhook({ ...event, createdMs: Date.now() - 59_000 }, 4, o);
    expect(late).toEqual({ kind: "gave-up", error: expect.stringMatching(lookupFailed) });
    expect(late.kind === "gave-up" && late.error).toMatch(/, after 4 attempts$/);
    // Refused for good, with all the retry time left: no second attempt.
    for (const url of ["http://127.0.0.1:9/hooks", "http://[64:ff9b::a9fe:a9fe]/latest/meta-data", "http://localhost:9/hooks", "ftp://93.184.216.34/x"]) {
      expect(await attemptWebhook({ ...event, url }, 1, o), url).toEqual({ kind: "gave-up", error: expect.stringMatching(/an internal address|must be http or https/) });
    }
  });
});
