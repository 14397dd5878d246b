import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { defaultModelPath } from "@attr-rag/engine";
import { AskRequest, AttributionMethod, AttrRagServiceClient, BatchServiceClient, EngineStrategy, type AskEvent } from "@attr-rag/contracts";
import { credentials, Metadata } from "@grpc/grpc-js";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT, startConsoleGateway, type GatewayFixture } from "./gatewayFixture.js";

const TOKEN = "console-test-token";
const QUESTION = "Explain all the required steps of the acetaminophen synthesis.";
/** Retrieves the fixture's story, which stories260K's answer resembles (see gatewayFixture). */
const STORY_QUESTION = "Lily and Tom played in the park.";
const PIPELINE = ["retrieved", "aligned", "reranked", "initialAnswerDelta", "occlusionProgress", "attribution", "selection", "gapFill", "finalAnswerDelta", "finalAnswer", "done"];
/** Debian's chromium (apt-get install -y chromium): never a downloaded browser. */
const CHROMIUM = process.env.ATTR_RAG_CHROMIUM ?? "/usr/bin/chromium";
/** Skipped with the reason where the browser is missing, except in CI (CI is set), where that is a failure. */
const missing = existsSync(CHROMIUM) || process.env.CI ? undefined : `chromium is missing at ${CHROMIUM}: apt-get install -y chromium`;
/** ATTR_RAG_SCREENSHOTS=1 writes the screenshots the README links (docs/console/); otherwise a temporary folder. */
const SHOTS = process.env.ATTR_RAG_SCREENSHOTS === "1" ? join(REPO_ROOT, "docs/console") : mkdtempSync(join(tmpdir(), "attr-rag-shots-"));

function grpcAsk(address: string, request: AskRequest): Promise<AskEvent[]> {
  const client = new AttrRagServiceClient(address, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${TOKEN}`);
  const events: AskEvent[] = [];
  return new Promise<AskEvent[]>((resolve, reject) => {
    const call = client.ask(request, metadata);
    call.on("data", (r: { event?: AskEvent }) => events.push(r.event!));
    call.on("error", reject);
    call.on("end", () => resolve(events));
  }).finally(() => client.close());
}

async function until(condition: () => boolean, timeoutMs = 30_000, everyMs = 50): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const stagesOnPage = (page: Page) => page.$$eval("ol.stages li", (rows) => rows.map((r) => r.getAttribute("data-stage") ?? ""));

describe.skipIf(missing !== undefined)(`web console in a real browser (Debian chromium)${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let gateway: GatewayFixture;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gateway = await startConsoleGateway(TOKEN, `whsec_${randomBytes(32).toString("base64")}`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  const setToken = async (token: string) => {
    await page.fill("#token", token);
    await page.dispatchEvent("#token", "change");
  };

  // Every test starts with the right token stored, whatever the one before it left in the page's storage
  // (the wrong-token test sets its own).
  beforeEach(async () => {
    await page.goto(`${gateway.url}/#/ask`);
    await setToken(TOKEN);
  });

  it("console - a wrong token gets a clear message, not a broken page", async () => {
    await page.goto(`${gateway.url}/#/ask`);
    await setToken("not-the-token");
    await page.fill("#max-tokens", "4");
    await page.click("#ask");
    const notice = page.locator("#notice");
    await notice.waitFor({ state: "visible" });
    expect(await notice.textContent()).toMatch(/refused.*invalid bearer token.*Token field/s);
    expect(await page.locator("#ask-status").textContent()).toContain("invalid bearer token");
    await page.screenshot({ path: join(SHOTS, "wrong-token.png") });
  });

  it("console - ask from the page: stages stream in pipeline order; the α table has one row per set with the gRPC decisions", async () => {
    await setToken(TOKEN);
    await page.goto(`${gateway.url}/#/ask`);
    await page.fill("#question", QUESTION);
    await page.fill("#k", "4");
    await page.fill("#max-tokens", "12");
    const snapshots: string[][] = [];
    await page.click("#ask");
    // Watch the list while the Ask runs: rows must appear one stage after another, never reordered.
    while (await page.locator("#ask").isDisabled()) {
      snapshots.push(await stagesOnPage(page));
      await page.waitForTimeout(40);
    }
    const final = await stagesOnPage(page);
    expect(await page.locator("#ask-status").textContent()).toBe("Finished.");
    expect(final).toEqual(PIPELINE.filter((s) => final.includes(s)));
    expect(final).toEqual(expect.arrayContaining(["retrieved", "occlusionProgress", "attribution", "selection", "finalAnswer", "done"]));
    for (const s of snapshots) expect(final.slice(0, s.length)).toEqual(s);
    expect(snapshots.some((s) => s.length > 0 && s.length < final.length)).toBe(true);
    await page.screenshot({ path: join(SHOTS, "ask.png"), fullPage: true });

    const grpc = await grpcAsk(
      gateway.server.address,
      AskRequest.fromPartial({
        question: QUESTION,
        retrieval: { k: 4 },
        generation: { maxTokens: 12, strategy: EngineStrategy.ENGINE_STRATEGY_SPECULATIVE },
        attribution: { method: AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION },
      }),
    );
    const attribution = grpc.find((e) => e.stage?.$case === "attribution")!.stage!.value as { rows: { setId: string }[] };
    const selection = grpc.find((e) => e.stage?.$case === "selection")!.stage!.value as { selectedSetIds: string[] };

    await page.click('nav a[data-page="result"]');
    const rows = page.locator("#attribution table tbody tr");
    await rows.first().waitFor();
    const table = await rows.evaluateAll((trs) => trs.map((tr) => ({ setId: tr.querySelector("code")?.textContent ?? "", decision: tr.querySelector(".badge")?.textContent ?? "" })));
    expect(table.map((r) => r.setId)).toEqual(attribution.rows.map((r) => r.setId));
    expect(table.map((r) => r.decision)).toEqual(attribution.rows.map((r) => (selection.selectedSetIds.includes(r.setId) ? "kept" : "dropped")));
    await page.screenshot({ path: join(SHOTS, "result.png"), fullPage: true });
  });

  it("console - hovering a citation highlights its chunk", async () => {
    await page.goto(`${gateway.url}/#/ask`);
    await page.fill("#question", STORY_QUESTION);
    await page.fill("#k", "4");
    await page.fill("#max-tokens", "64");
    await page.click("#ask");
    await page.locator("#open-result").waitFor({ state: "visible", timeout: 60_000 });
    await page.click("#open-result");
    // The Result page renders on the hash change, after the click returns: count its citations once it is there.
    await page.locator("#result").waitFor();
    const marks = page.locator("#result mark.cite");
    const count = await marks.count();
    expect(count).toBeGreaterThan(0);
    const mark = marks.first();
    const ids = ((await mark.getAttribute("data-chunks")) ?? "").split(" ");
    expect(await page.locator(".chunk.highlight").count()).toBe(0);
    await mark.hover();
    const highlighted = await page.locator(".chunk.highlight").evaluateAll((els) => els.map((e) => e.getAttribute("data-chunk")));
    expect(highlighted.length).toBeGreaterThan(0);
    for (const id of highlighted) expect(ids).toContain(id);
    await page.screenshot({ path: join(SHOTS, "citation-hover.png") });
    await page.mouse.move(0, 0);
    expect(await page.locator(".chunk.highlight").count()).toBe(0);
    // The same from the keyboard: a citation is focusable and focus highlights too.
    await mark.focus();
    expect(await page.locator(".chunk.highlight").count()).toBeGreaterThan(0);
  });

  it("console - which set shaped which sentence: clicking a sentence shows its sets' bars, hovering a set lights up the sentences it supports, a heat map row per sentence", async () => {
    await page.goto(`${gateway.url}/#/ask`);
    await page.fill("#question", STORY_QUESTION);
    await page.fill("#k", "4");
    await page.fill("#max-tokens", "48");
    // A threshold of 0: every block that made a sentence likelier at all supports it, so hovering has sentences to light.
    await page.fill("#sentence-threshold", "0");
    await page.click("#ask");
    await page.locator("#open-result").waitFor({ state: "visible", timeout: 60_000 });
    await page.click("#open-result");
    const view = page.locator("#sa-final");
    await view.waitFor();
    const sentences = view.locator("label.sa-s");
    const n = await sentences.count();
    expect(n).toBeGreaterThan(1);
    expect(await view.locator("table.sa-heat tbody tr").count()).toBe(n);
    const panel = (k: number) => view.locator(`.sa-panel.sa-p${k}`);
    // The first sentence is picked: its panel shows one bar per block; the others are hidden.
    const blocks = await view.locator("table.sa-heat thead .sa-set").count();
    expect(await panel(0).isVisible()).toBe(true);
    expect(await panel(0).locator(".sa-bar-row").count()).toBe(blocks);
    expect(await panel(1).isVisible()).toBe(false);
    await sentences.nth(1).click();
    expect(await panel(1).isVisible()).toBe(true);
    expect(await panel(0).isVisible()).toBe(false);
    // The bar values are the heat map's row, number for number.
    const barDrops = await panel(1).locator(".sa-value").evaluateAll((els) => els.map((e) => e.getAttribute("data-drop")));
    const rowDrops = await view.locator("table.sa-heat tbody tr").nth(1).locator("td.sa-cell").evaluateAll((els) => els.map((e) => e.getAttribute("data-drop")));
    expect(barDrops).toEqual(rowDrops);
    await page.locator("section#sentences").screenshot({ path: join(SHOTS, "sentences.png") });

    // Hover a block that supports some sentence: exactly those sentences change background.
    const supported = await sentences.evaluateAll((els) => els.map((e) => Array.from(e.classList, (c) => String(c)).filter((c) => c.startsWith("sa-by-")).map((c) => Number(c.slice(6)))));
    const j = supported.flat()[0];
    expect(j, "some sentence is supported by a block at threshold 0").toBeDefined();
    const backgrounds = () => sentences.evaluateAll((els) => els.map((e) => getComputedStyle(e).backgroundColor));
    await page.mouse.move(0, 0);
    const before = await backgrounds();
    await view.locator(`table.sa-heat thead .sa-set-${j}`).hover();
    const during = await backgrounds();
    supported.forEach((sets, k) => {
      if (k === 1) return; // the picked sentence keeps its own highlight
      expect(during[k] !== before[k], `sentence ${k} (supported by ${sets.join(",")})`).toBe(sets.includes(j!));
    });
    await view.screenshot({ path: join(SHOTS, "sentences-hover.png") });
  });

  it("console - Cancel mid-occlusion ends the stream and frees the engine (0 KV sequences in use)", async () => {
    await page.goto(`${gateway.url}/#/ask`);
    await page.fill("#k", "6");
    await page.fill("#max-tokens", "64");
    await page.click("#ask");
    // Cancel while the engine holds the occlusion job's sequences, seen on the server (polled every 2 ms): the
    // page's occlusionProgress row can arrive after a fast job has already let them go.
    await until(() => gateway.runtime.generator.sequencesInUse() > 0, 60_000, 2);
    const stoppedBefore = gateway.server.stopped.count;
    await page.click("#cancel");
    await page.waitForFunction(() => document.querySelector("#ask-status")?.textContent === "Cancelled.");
    expect(await stagesOnPage(page)).not.toContain("attribution");
    expect(await stagesOnPage(page)).not.toContain("done");
    await until(() => gateway.runtime.generator.sequencesInUse() === 0 && gateway.server.admission.running === 0);
    expect(gateway.runtime.generator.sequencesInUse()).toBe(0);
    // The server's side: the Ask was cancelled and its work stopped (it did not run on to its end unseen).
    expect(gateway.server.stopped.count).toBe(stoppedBefore + 1);
    expect(gateway.server.stopped.recent().at(-1)).toMatchObject({ rpc: "Ask", code: 1, stopped: true });
    expect(gateway.server.stopped.ranToEnd).toBe(0);
  });

  it("console - the Index page searches the store and opens a document; the Batches page lists batches with progress", async () => {
    await page.goto(`${gateway.url}/#/index`);
    await page.waitForFunction(() => /33 documents/.test(document.querySelector("#page p")?.textContent ?? ""));
    await page.fill("#search-query", "acetic anhydride");
    await page.press("#search-query", "Enter");
    await page.locator("ol.hits li").first().waitFor();
    expect(await page.locator("ol.hits li").count()).toBe(8);
    await page.locator("ol.hits li button").first().click();
    await page.locator('section[aria-label="Document"] .chunk').first().waitFor();
    await page.screenshot({ path: join(SHOTS, "index.png"), fullPage: true });

    // The batch's webhook receiver refuses once, then takes it: the page shows the delivery as it stands.
    let calls = 0;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(++calls === 1 ? 503 : 204).end());
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const batches = new BatchServiceClient(gateway.server.address, credentials.createInsecure());
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${TOKEN}`);
    await new Promise((resolve, reject) =>
      batches.createBatch(
        { batchId: "console-batch", label: "two questions", webhookUrl, items: [0, 1].map((i) => ({ itemId: `q${i}`, request: AskRequest.fromPartial({ question: `${QUESTION} (${i})`, generation: { maxTokens: 4 }, retrieval: { k: 2 } }) })) },
        metadata,
        (err, res) => (err ? reject(err) : resolve(res)),
      ),
    );
    batches.close();
    await page.goto(`${gateway.url}/#/batches`);
    const row = page.locator("table.list tbody tr").first();
    await row.waitFor();
    expect(await row.textContent()).toContain("console-batch");
    expect(await row.locator("progress").getAttribute("max")).toBe("2");
    expect(await row.textContent()).toContain("webhook waiting");
    // The page follows a running batch: it refreshes until both items have finished.
    await page.waitForFunction(() => /completed/.test(document.querySelector("table.list tbody tr")?.textContent ?? ""), undefined, { timeout: 90_000 });
    expect(await row.locator("progress").getAttribute("value")).toBe("2");
    // It keeps following the webhook until it is delivered: refused once (HTTP 503), then taken.
    await page.waitForFunction(() => /webhook delivered · 2 attempts/.test(document.querySelector("table.list tbody tr")?.textContent ?? ""), undefined, { timeout: 30_000 });
    receiver.close();
    await row.locator("button", { hasText: "Items" }).click();
    const items = page.locator('table[aria-label="Items of console-batch"] tbody tr');
    await items.nth(1).waitFor();
    expect((await items.allTextContents()).map((t) => /q[01]/.exec(t)?.[0]).sort()).toEqual(["q0", "q1"]);
    expect(await items.first().textContent()).toContain("succeeded");
    await page.screenshot({ path: join(SHOTS, "batches.png"), fullPage: true });
  });

  it("console - the Cluster page shows the engine, its KV use and counters (embedded: the gateway's own context)", async () => {
    await page.goto(`${gateway.url}/#/cluster`);
    const row = page.locator('table[aria-label="Workers"] tbody tr');
    await row.first().waitFor();
    const cells = await row.first().locator("td").allTextContents();
    const stats = gateway.runtime.generator.schedulerStats();
    expect(cells.slice(0, 2)).toEqual(["embedded", basename(defaultModelPath()).replace(/\.gguf$/i, "")]);
    expect(cells[4]).toBe(`0 / ${stats.sequences}`);
    expect(Number(cells[6])).toBe(stats.decodeCalls);
    expect(await page.locator("#cluster").locator("..").locator("p.status").textContent()).toMatch(/^Embedded/);
    await page.screenshot({ path: join(SHOTS, "cluster.png"), fullPage: true });
  });

  it("console - readable on a narrow window", async () => {
    const narrow = await browser.newPage({ viewport: { width: 420, height: 860 } });
    await narrow.goto(`${gateway.url}/#/ask`);
    await narrow.locator("#question").waitFor();
    // Nothing wider than the window: no sideways scrolling on a phone-sized screen.
    expect(await narrow.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await narrow.screenshot({ path: join(SHOTS, "ask-narrow.png"), fullPage: true });
    await narrow.close();
  });
});
