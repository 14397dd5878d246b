import { describe, expect, it } from "vitest";
import * as contracts from "../src/index.js";
import {
  BATCH_BUCKET,
  BATCH_CANCEL_SUBJECTS,
  BATCH_ITEMS_STREAM,
  BATCH_ITEMS_STREAM_SUBJECTS,
  BATCH_RESULTS_STREAM,
  BATCH_RESULTS_STREAM_SUBJECTS,
  BATCH_RUNNERS_CONSUMER,
  batchCancelSubject,
  batchItemsSubject,
  batchResultsFilter,
  batchResultSubject,
  isBatchId,
  WEBHOOK_SENDERS_CONSUMER,
  WEBHOOKS_STREAM,
  WEBHOOKS_STREAM_SUBJECTS,
  webhookEventSubject,
  DEAD_LETTER_STREAM,
  DEAD_LETTER_STREAM_SUBJECTS,
  INDEX_NATS_SERVICE,
  JOB_KINDS,
  JOBS_STREAM,
  JOBS_STREAM_SUBJECTS,
  SELECTOR_NATS_SERVICE,
  SUBJECT_PREFIX,
  deadLetterSubject,
  jobCancelSubject,
  jobProgressSubject,
  jobResultSubject,
  jobSubject,
  workerConsumer,
  workerFilterSubject,
} from "../src/index.js";

/** NATS subject matching: `*` matches one token, a trailing `>` one or more. */
function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split(".");
  const s = subject.split(".");
  for (let i = 0; i < f.length; i++) {
    if (f[i] === ">") return s.length > i;
    if (i >= s.length || (f[i] !== "*" && f[i] !== s[i])) return false;
  }
  return f.length === s.length;
}

const NATS_NAME = /^[-\w]+$/; // nats.js services: service, queue and endpoint names
const SEMVER = /^\d+\.\d+\.\d+$/;
const SERVICES = [SELECTOR_NATS_SERVICE, INDEX_NATS_SERVICE];
const ENDPOINTS = SERVICES.flatMap((s) => Object.values(s.endpoints));

describe("subjects", () => {
  it("subjects - the test matcher follows NATS wildcard rules", () => {
    expect(subjectMatches("a.*.c", "a.b.c")).toBe(true);
    expect(subjectMatches("a.>", "a.b.c")).toBe(true);
    expect(subjectMatches("a.>", "a")).toBe(false);
    expect(subjectMatches("a.b", "a.b.c")).toBe(false);
  });

  const JOB_SUBJECTS = JOB_KINDS.flatMap((kind) => ["stories260K", "qwen2_5-7b"].map((model) => jobSubject(kind, model)));

  it("subjects - the jobs stream captures every job subject and no result, progress, cancel, dead-letter or service subject", () => {
    for (const subject of JOB_SUBJECTS) {
      expect(JOBS_STREAM_SUBJECTS.some((f) => subjectMatches(f, subject))).toBe(true);
    }
    const others = [jobResultSubject("job-1"), jobProgressSubject("job-1"), jobCancelSubject("job-1"), deadLetterSubject("occlusion"), ...ENDPOINTS.map((e) => e.subject)];
    for (const subject of others) {
      expect(JOBS_STREAM_SUBJECTS.filter((f) => subjectMatches(f, subject))).toEqual([]);
    }
    for (const kind of JOB_KINDS) expect(DEAD_LETTER_STREAM_SUBJECTS.some((f) => subjectMatches(f, deadLetterSubject(kind)))).toBe(true);
    expect(DEAD_LETTER_STREAM_SUBJECTS.filter((f) => JOB_SUBJECTS.some((s) => subjectMatches(f, s)))).toEqual([]);
  });

  it("subjects - a worker's consumer filter takes every kind of job for its model and none for another", () => {
    expect(jobSubject("occlusion", "stories260K")).toBe("attr_rag.v1.queue.occlusion.stories260K");
    for (const kind of JOB_KINDS) {
      expect(subjectMatches(workerFilterSubject("stories260K"), jobSubject(kind, "stories260K"))).toBe(true);
      expect(subjectMatches(workerFilterSubject("stories260K"), jobSubject(kind, "other"))).toBe(false);
    }
    expect(workerConsumer("stories260K")).not.toBe(workerConsumer("other"));
    expect(() => jobSubject("occlusion", "a.b")).toThrow(/model id must be a NATS subject token/);
  });

  it("subjects - each lane has its own consumer: the batch lane's filter takes batch jobs only, the interactive one none of them", () => {
    expect(jobSubject("occlusion", "stories260K", "batch")).toBe("attr_rag.v1.queue.occlusion.stories260K.batch");
    for (const kind of JOB_KINDS) {
      const batch = jobSubject(kind, "stories260K", "batch");
      expect(JOBS_STREAM_SUBJECTS.some((f) => subjectMatches(f, batch))).toBe(true);
      expect(subjectMatches(workerFilterSubject("stories260K", "batch"), batch)).toBe(true);
      expect(subjectMatches(workerFilterSubject("stories260K"), batch)).toBe(false);
      expect(subjectMatches(workerFilterSubject("stories260K", "batch"), jobSubject(kind, "stories260K"))).toBe(false);
      expect(subjectMatches(workerFilterSubject("other", "batch"), batch)).toBe(false);
    }
    expect(workerConsumer("stories260K", "batch")).not.toBe(workerConsumer("stories260K"));
    expect(workerConsumer("stories260K", "batch")).toMatch(NATS_NAME);
  });

  it("subjects - batch items, results and cancels have their own subjects, outside the jobs stream", () => {
    expect(batchItemsSubject("nightly-42")).toBe("attr_rag.v1.batch.items.nightly-42");
    expect(batchResultSubject("nightly-42", 7)).toBe("attr_rag.v1.batch.results.nightly-42.7");
    expect(subjectMatches(batchResultsFilter("nightly-42"), batchResultSubject("nightly-42", 7))).toBe(true);
    expect(subjectMatches(batchResultsFilter("nightly-4"), batchResultSubject("nightly-42", 7))).toBe(false);
    expect(BATCH_ITEMS_STREAM_SUBJECTS.some((f) => subjectMatches(f, batchItemsSubject("b")))).toBe(true);
    expect(BATCH_RESULTS_STREAM_SUBJECTS.some((f) => subjectMatches(f, batchResultSubject("b", 0)))).toBe(true);
    expect(subjectMatches(BATCH_CANCEL_SUBJECTS, batchCancelSubject("b"))).toBe(true);
    for (const subject of [batchItemsSubject("b"), batchResultSubject("b", 0), batchCancelSubject("b")]) {
      expect(JOBS_STREAM_SUBJECTS.filter((f) => subjectMatches(f, subject))).toEqual([]);
    }
    expect(BATCH_ITEMS_STREAM_SUBJECTS.filter((f) => subjectMatches(f, batchResultSubject("b", 0)))).toEqual([]);
    for (const id of ["", "a.b", "a b", "x".repeat(65), "é"]) {
      expect(isBatchId(id)).toBe(false);
      expect(() => batchItemsSubject(id)).toThrow(RangeError);
    }
    expect(() => batchResultSubject("b", -1)).toThrow(RangeError);
    for (const name of [BATCH_ITEMS_STREAM, BATCH_RESULTS_STREAM, BATCH_BUCKET, BATCH_RUNNERS_CONSUMER, WEBHOOKS_STREAM, WEBHOOK_SENDERS_CONSUMER]) expect(name).toMatch(NATS_NAME);
  });

  it("subjects - a batch's webhook event has its own subject in the webhooks stream, in no other stream", () => {
    expect(webhookEventSubject("nightly-42")).toBe("attr_rag.v1.webhooks.batch.nightly-42");
    expect(WEBHOOKS_STREAM_SUBJECTS.some((f) => subjectMatches(f, webhookEventSubject("b")))).toBe(true);
    for (const other of [...JOBS_STREAM_SUBJECTS, ...BATCH_ITEMS_STREAM_SUBJECTS, ...BATCH_RESULTS_STREAM_SUBJECTS, BATCH_CANCEL_SUBJECTS]) {
      expect(subjectMatches(other, webhookEventSubject("b")), other).toBe(false);
    }
    for (const id of ["", "a.b", "a>b", "x".repeat(65)]) expect(() => webhookEventSubject(id)).toThrow(RangeError);
  });

  it("subjects - result and progress subjects are per job", () => {
    expect(jobResultSubject("job-1_a")).toBe("attr_rag.v1.jobs.job-1_a.result");
    expect(jobProgressSubject("job-1_a")).toBe("attr_rag.v1.jobs.job-1_a.progress");
    expect(jobCancelSubject("job-1_a")).toBe("attr_rag.v1.jobs.job-1_a.cancel");
    expect(jobResultSubject("a")).not.toBe(jobResultSubject("b"));
  });

  it.each(["", "a.b", "*", ">", "a b", "a\tb"])("subjects - job id %j is rejected", (jobId) => {
    expect(() => jobResultSubject(jobId)).toThrow(RangeError);
    expect(() => jobProgressSubject(jobId)).toThrow(RangeError);
  });

  it("subjects - stream, consumer and service names are valid for NATS", () => {
    for (const stream of [JOBS_STREAM, DEAD_LETTER_STREAM, BATCH_ITEMS_STREAM, BATCH_RESULTS_STREAM]) expect(stream).toMatch(/^[^.*>\s/\\]+$/);
    expect(workerConsumer("stories260K")).toMatch(NATS_NAME);
    for (const service of SERVICES) {
      expect(service.name).toMatch(NATS_NAME);
      expect(service.queue).toMatch(NATS_NAME);
      expect(service.version).toMatch(SEMVER);
      for (const endpoint of Object.values(service.endpoints)) expect(endpoint.name).toMatch(NATS_NAME);
    }
  });

  it("subjects - every subject is ours and unique", () => {
    const all = [...JOB_SUBJECTS, ...ENDPOINTS.map((e) => e.subject)];
    for (const subject of all) expect(subject.startsWith(`${SUBJECT_PREFIX}.`)).toBe(true);
    expect(new Set(all).size).toBe(all.length);
  });

  it("subjects - endpoint metadata names exported protobuf messages", () => {
    const exported = contracts as unknown as Record<string, { encode?: unknown; decode?: unknown } | undefined>;
    for (const { metadata } of ENDPOINTS) {
      for (const fullName of [metadata.request, metadata.response]) {
        expect(fullName.startsWith("attr_rag.v1.")).toBe(true);
        const message = exported[fullName.slice("attr_rag.v1.".length)];
        expect(typeof message?.encode, fullName).toBe("function");
        expect(typeof message?.decode, fullName).toBe("function");
      }
    }
  });
});

describe("embedder tokens", () => {
  it("an embedder id becomes a subject token and consumer name of its own, stable, distinct for ids that differ only in replaced characters", () => {
    const id = contracts.ggufEmbedderId("bge-small-en-v1.5-f16.gguf", 33_212_160);
    expect(id).toBe("gguf:bge-small-en-v1.5-f16.gguf@33212160");
    const token = contracts.embedderToken(id);
    expect(token).toMatch(/^embed-gguf_bge-small-en-v1_5-f16_gguf_33212160-[0-9a-f]{8}$/);
    expect(contracts.embedderToken(id)).toBe(token);
    expect(contracts.isSubjectToken(token)).toBe(true);
    expect(jobSubject("embed", token, "batch")).toBe(`attr_rag.v1.queue.embed.${token}.batch`);
    expect(workerConsumer(token)).toMatch(/^[A-Za-z0-9_-]+$/);
    const lookalike = contracts.embedderToken("gguf:bge-small-en-v1_5-f16.gguf@33212160");
    expect(lookalike.slice(0, -9)).toBe(token.slice(0, -9));
    expect(lookalike).not.toBe(token);
    expect(() => contracts.embedderToken("")).toThrow(/cannot be empty/);
  });
});
