// deploy/ cannot be started here (no Docker, no Kubernetes), so its files are held to what can be checked:
// the YAML files parse (compose, the kustomize base, the Helm values); every command and option they run
// exists in this CLI; every role logs in as itself with its own password; the manifests have the shape the
// design asks for; the NATS permissions in the Helm values are exactly those of deploy/nats/nats-server.conf
// (read here by pattern, not by a NATS config parser; the distributed tests start nats-server with it); the
// Dockerfiles are only checked for their base image and what they install.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { parse, parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { createProgram } from "../src/program.js";
import { REPO_ROOT } from "./helpers/runCli.js";

const DEPLOY = join(REPO_ROOT, "deploy");
const ROLES = ["gateway", "worker", "selector", "index"] as const;
type Role = (typeof ROLES)[number];

interface K8sObject {
  kind: string;
  apiVersion: string;
  metadata: { name: string };
  spec: Record<string, any>;
}
interface Container {
  name: string;
  image: string;
  args: string[];
  env?: { name: string; value?: string; valueFrom?: Record<string, { name: string; key: string }> }[];
  ports?: { name: string; containerPort: number }[];
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Permissions {
  publish: string[];
  subscribe: string[];
  allow_responses: boolean;
}

const read = (path: string) => readFileSync(join(DEPLOY, path), "utf8");
const docs = (path: string) => parseAllDocuments(read(path)).map((d) => d.toJS() as K8sObject);

/** `attr-rag ARGS` is a real command and every --option it passes exists on it. */
function expectValidCommand(args: readonly string[], where: string): void {
  let command: Command = createProgram();
  let i = 0;
  while (i < args.length && !args[i]!.startsWith("-")) {
    const sub = command.commands.find((c) => c.name() === args[i]);
    if (sub === undefined) break;
    command = sub;
    i++;
  }
  expect(i, `${where}: "${args.join(" ")}" names no attr-rag command`).toBeGreaterThan(0);
  expect(command.commands, `${where}: "${args.slice(0, i).join(" ")}" is a command group, not a command`).toHaveLength(0);
  const longs = new Set(command.options.map((o) => o.long));
  for (const arg of args.slice(i)) if (arg.startsWith("--")) expect(longs.has(arg.split("=")[0]!), `${where}: attr-rag ${args.slice(0, i).join(" ")} has no ${arg}`).toBe(true);
}

/** Whether a NATS permission list grants `subject` (a concrete one): `*` is one token, a last `>` one or more. */
function grants(patterns: readonly string[], subject: string): boolean {
  const tokens = subject.split(".");
  return patterns.some((pattern) => {
    const p = pattern.split(".");
    for (let i = 0; i < p.length; i++) {
      if (p[i] === ">") return i === p.length - 1 && tokens.length > i;
      if (i >= tokens.length || (p[i] !== "*" && p[i] !== tokens[i])) return false;
    }
    return p.length === tokens.length;
  });
}

/** Concrete subjects a client publishes to when it queues batch items, records results or edits batch records. */
const BATCH_SUBJECTS = [
  "attr_rag.v1.batch.items.b-1.7",
  "attr_rag.v1.batch.results.b-1.7",
  "attr_rag.v1.batch.cancel.b-1",
  "$KV.ATTR_RAG_BATCHES.b-1",
  "$JS.API.STREAM.CREATE.KV_ATTR_RAG_BATCHES",
  "$JS.ACK.ATTR_RAG_BATCH_ITEMS.runner.1.2.3.4.5.6",
  // The kept advisories of items that ran out of deliveries, pulled and acknowledged by the gateways.
  "$JS.API.STREAM.CREATE.ATTR_RAG_BATCH_DEAD_ITEMS",
  // A batch id used again after its record expired: the earlier batch's results are purged.
  "$JS.API.STREAM.PURGE.ATTR_RAG_BATCH_RESULTS",
  "$JS.API.CONSUMER.MSG.NEXT.ATTR_RAG_BATCH_DEAD_ITEMS.attr-rag-batch-dead-items",
  "$JS.ACK.ATTR_RAG_BATCH_DEAD_ITEMS.attr-rag-batch-dead-items.1.2.3.4.5.6",
];

/** The users of deploy/nats/nats-server.conf with their permissions (the subset of NATS syntax it uses). */
function confUsers(conf: string): Map<string, Permissions & { password: string }> {
  const users = new Map<string, Permissions & { password: string }>();
  const blocks = conf.split(/\n\s*user: /).slice(1);
  const list = (block: string, key: string) => [...(new RegExp(`${key}: \\[([^\\]]*)\\]`).exec(block)?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
  for (const block of blocks) {
    const name = /^(\w+)/.exec(block)![1]!;
    users.set(name, {
      password: /password: (\S+)/.exec(block)![1]!,
      publish: list(block, "publish"),
      subscribe: list(block, "subscribe"),
      allow_responses: /allow_responses: true/.test(block),
    });
  }
  return users;
}

describe("deploy/", () => {
  const conf = confUsers(read("nats/nats-server.conf"));

  it("deploy - nats-server.conf has one user per role, each with its own password variable", () => {
    expect([...conf.keys()].sort()).toEqual([...ROLES].sort());
    for (const role of ROLES) expect(conf.get(role)!.password).toBe(`$ATTR_RAG_${role.toUpperCase()}_PASSWORD`);
    // Least privilege where it matters most: only the gateway may queue jobs, the index embed jobs only; a worker may not.
    expect(conf.get("gateway")!.publish).toContain("attr_rag.v1.queue.>");
    for (const role of ["worker", "selector"]) expect(conf.get(role)!.publish.some((s) => s.startsWith("attr_rag.v1.queue"))).toBe(false);
    const index = conf.get("index")!.publish;
    expect(index.filter((s) => s.startsWith("attr_rag.v1.queue"))).toEqual(["attr_rag.v1.queue.embed.>"]);
    for (const kind of ["occlusion", "generation", "likelihood", "rerank"]) expect(grants(index, `attr_rag.v1.queue.${kind}.m`), kind).toBe(false);
    expect([grants(index, "attr_rag.v1.queue.embed.t"), grants(index, "attr_rag.v1.queue.embed.t.batch")]).toEqual([true, true]);
  });

  it("deploy - batches: only gateways queue items, record results and keep the batch records; workers answer their own stats service", () => {
    const gateway = conf.get("gateway")!;
    for (const subject of ["attr_rag.v1.batch.items.>", "attr_rag.v1.batch.results.>", "attr_rag.v1.batch.cancel.*", "$KV.ATTR_RAG_BATCHES.>", "$JS.API.STREAM.CREATE.KV_ATTR_RAG_BATCHES", "$JS.ACK.ATTR_RAG_BATCH_ITEMS.>"]) {
      expect(gateway.publish, subject).toContain(subject);
    }
    expect(gateway.subscribe).toContain("attr_rag.v1.batch.cancel.*");
    // Those advisories reach the gateways through a stream, not a subscription that misses them while none runs.
    expect(grants(gateway.subscribe, "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.ATTR_RAG_BATCH_ITEMS.attr-rag-batch-runners")).toBe(false);
    // Checked with NATS's wildcard rules, so a broad grant (">", "$JS.API.>", "attr_rag.v1.*.>") counts too.
    for (const subject of BATCH_SUBJECTS) expect(grants(gateway.publish, subject), `gateway → ${subject}`).toBe(true);
    for (const role of ["worker", "selector", "index"] as const) {
      for (const subject of BATCH_SUBJECTS) expect(grants(conf.get(role)!.publish, subject), `${role} → ${subject}`).toBe(false);
    }
    expect([grants([">"], BATCH_SUBJECTS[0]!), grants(["$JS.API.>"], BATCH_SUBJECTS[4]!), grants(["attr_rag.v1.*.cancel.*"], BATCH_SUBJECTS[2]!)]).toEqual([true, true, true]);
    expect([grants(["attr_rag.v1.batch.items.*"], BATCH_SUBJECTS[0]!), grants(["$KV.ATTR_RAG_BATCHES"], BATCH_SUBJECTS[3]!), grants(["attr_rag.v1.queue.>"], BATCH_SUBJECTS[0]!)]).toEqual([false, false, false]);
    const worker = conf.get("worker")!;
    expect(worker.subscribe).toEqual(expect.arrayContaining(["$SRV.>", "attr_rag.v1.worker.>"]));
    expect(worker.allow_responses).toBe(true);
    // A worker pulls both lanes of its model through the one CONSUMER.MSG.NEXT grant on the jobs stream.
    expect(worker.publish).toContain("$JS.API.CONSUMER.MSG.NEXT.ATTR_RAG_JOBS.>");
  });

  it("deploy - the NATS Helm values grant exactly the permissions of nats-server.conf, passwords from the attr-rag-nats Secret", () => {
    const values = parse(read("k8s/nats-values.yaml"));
    expect(values.config.jetstream.enabled).toBe(true);
    const users = values.config.merge.accounts.ATTR_RAG.users as ({ user: string; password: string; permissions: Partial<Permissions> })[];
    expect(users.map((u) => u.user).sort()).toEqual([...ROLES].sort());
    for (const u of users) {
      const c = conf.get(u.user)!;
      expect(u.password).toBe(`<< ${c.password} >>`);
      expect([...u.permissions.publish!].sort(), u.user).toEqual([...c.publish].sort());
      expect([...u.permissions.subscribe!].sort(), u.user).toEqual([...c.subscribe].sort());
      expect(u.permissions.allow_responses ?? false, u.user).toBe(c.allow_responses);
      const env = values.container.env[c.password.slice(1)];
      expect(env.valueFrom.secretKeyRef).toEqual({ name: "attr-rag-nats", key: `${u.user}-password` });
    }
  });

  it("deploy - the kustomize base: gateway Deployment + Service, GPU worker Deployment, selector Deployment, index StatefulSet with a volume", () => {
    const kustomization = parse(read("k8s/base/kustomization.yaml"));
    const objects = (kustomization.resources as string[]).flatMap((file) => {
      expect(existsSync(join(DEPLOY, "k8s/base", file)), file).toBe(true);
      return docs(join("k8s/base", file));
    });
    const byName = new Map(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
    expect([...byName.keys()].sort()).toEqual([
      "Deployment/attr-rag-gateway",
      "Deployment/attr-rag-selector",
      "Deployment/attr-rag-worker",
      "Service/attr-rag-gateway",
      "Service/attr-rag-index",
      "StatefulSet/attr-rag-index",
    ]);
    const images = new Set((kustomization.images as { name: string }[]).map((i) => i.name));
    const containers = (name: string): Container[] => byName.get(name)!.spec.template.spec.containers;
    const roleOf: Record<string, Role> = { "Deployment/attr-rag-gateway": "gateway", "Deployment/attr-rag-worker": "worker", "Deployment/attr-rag-selector": "selector", "StatefulSet/attr-rag-index": "index" };
    for (const [name, role] of Object.entries(roleOf)) {
      const o = byName.get(name)!;
      expect(o.spec.selector.matchLabels).toEqual(o.spec.template.metadata.labels);
      const [c] = containers(name);
      expect(images.has(c!.image), `${name}: image ${c!.image} is not in the kustomization's images`).toBe(true);
      expectValidCommand(c!.args, name);
      const env = new Map((c!.env ?? []).map((e) => [e.name, e]));
      expect(env.get("ATTR_RAG_NATS_USER")?.value, name).toBe(role);
      expect(env.get("ATTR_RAG_NATS_PASS")?.valueFrom?.secretKeyRef, name).toEqual({ name: "attr-rag-nats", key: `${role}-password` });
      expect(env.get("ATTR_RAG_NATS")?.valueFrom?.configMapKeyRef, name).toEqual({ name: "attr-rag-config", key: "ATTR_RAG_NATS" });
      for (const init of o.spec.template.spec.initContainers ?? []) expectValidCommand((init as Container).args, `${name} init ${init.name}`);
    }
    const [worker] = containers("Deployment/attr-rag-worker");
    expect(worker!.resources!.limits!["nvidia.com/gpu"]).toBeGreaterThanOrEqual(1);
    expect(worker!.args).toContain("--gpu-layers");
    expect(worker!.args[worker!.args.indexOf("--gpu") + 1]).toBe("cuda");
    expect(worker!.image).toBe("attr-rag-worker-cuda");
    // The gateway asks for the model id the workers serve.
    expect(worker!.args[worker!.args.indexOf("--model-id") + 1]).toBe("$(ATTR_RAG_MODEL)");
    const [gateway] = containers("Deployment/attr-rag-gateway");
    // The workers serve the cross-encoder under the id the gateway re-ranks with (its ATTR_RAG_RERANKER), and
    // the worker pod pulls the file it names.
    const literals = new Map((kustomization.configMapGenerator[0].literals as string[]).map((l) => l.split("=") as [string, string]));
    expect(literals.get("ATTR_RAG_RERANKER")).toMatch(/^[^.*>\s]+$/);
    expect(worker!.args[worker!.args.indexOf("--reranker-id") + 1]).toBe("$(ATTR_RAG_RERANKER)");
    for (const c of [worker!, gateway!]) expect(new Map(c.env!.map((e) => [e.name, e])).get("ATTR_RAG_RERANKER")?.valueFrom?.configMapKeyRef).toEqual({ name: "attr-rag-config", key: "ATTR_RAG_RERANKER" });
    const rerankerFile = worker!.args[worker!.args.indexOf("--reranker") + 1]!;
    const pulls = (byName.get("Deployment/attr-rag-worker")!.spec.template.spec.initContainers as Container[]).map((c) => c.args.at(-1)!);
    expect(pulls.some((source) => source.endsWith(`/${rerankerFile}.gguf`)), `no init container pulls ${rerankerFile}`).toBe(true);
    // More than one gateway: a batch survives the death of the one that took it (another runs its items).
    expect(byName.get("Deployment/attr-rag-gateway")!.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(new Map(gateway!.env!.map((e) => [e.name, e])).get("ATTR_RAG_MODEL")?.valueFrom?.configMapKeyRef?.key).toBe("ATTR_RAG_MODEL");
    const service = byName.get("Service/attr-rag-gateway")!;
    expect(service.spec.selector).toEqual(byName.get("Deployment/attr-rag-gateway")!.spec.template.metadata.labels);
    expect(gateway!.ports!.map((p) => p.name)).toContain(service.spec.ports[0].targetPort);
    // The HTTP/JSON face and the web console beside gRPC, on the port the container serves them.
    const http = service.spec.ports.find((p: { name: string }) => p.name === "http");
    expect(gateway!.ports!.find((p) => p.name === http?.targetPort)?.containerPort).toBe(8080);
    expect(gateway!.args!.join(" ")).toContain("--http-port 8080");
    // Bound beyond loopback, the HTTP face needs a token (the gateway refuses to start without one): from a Secret.
    expect(new Map(gateway!.env!.map((e) => [e.name, e])).get("ATTR_RAG_AUTH_TOKEN")?.valueFrom?.secretKeyRef).toEqual({ name: "attr-rag-gateway", key: "token" });
    expect(read("k8s/base/kustomization.yaml")).toMatch(/kubectl create secret generic attr-rag-gateway --from-literal=token=/);
    const index = byName.get("StatefulSet/attr-rag-index")!;
    const claim = index.spec.volumeClaimTemplates[0].metadata.name;
    const [indexContainer] = containers("StatefulSet/attr-rag-index");
    const store = indexContainer!.args[indexContainer!.args.indexOf("--store") + 1]!;
    const mount = indexContainer!.volumeMounts!.find((m) => m.name === claim)!;
    expect(store.startsWith(`${mount.mountPath}/`) || store === mount.mountPath).toBe(true);
    expect(index.spec.serviceName).toBe("attr-rag-index");
  });

  it("deploy - compose.yaml runs every role with its own credentials and valid commands; the gateway is the only published port", () => {
    const compose = parse(read("compose.yaml"), { merge: true });
    const services = compose.services as Record<string, { command?: string[]; entrypoint?: string[]; environment?: Record<string, string>; ports?: string[]; volumes?: string[]; profiles?: string[] }>;
    expect(Object.keys(services).sort()).toEqual(["gateway", "index", "ingest", "models-pull", "nats", "prometheus", "reranker-pull", "selector", "worker"]);
    for (const role of ROLES) {
      const s = services[role]!;
      expectValidCommand(s.command!, `compose ${role}`);
      expect(s.environment!.ATTR_RAG_NATS_USER).toBe(role);
      expect(s.environment!.ATTR_RAG_NATS_PASS).toMatch(new RegExp(`^\\$\\{ATTR_RAG_${role.toUpperCase()}_PASSWORD:\\?`));
    }
    expectValidCommand(services["models-pull"]!.command!, "compose models-pull");
    expectValidCommand(services["reranker-pull"]!.command!, "compose reranker-pull");
    expectValidCommand(services.ingest!.entrypoint!.slice(2), "compose ingest");
    for (const role of ROLES) expect(services.nats!.environment![`ATTR_RAG_${role.toUpperCase()}_PASSWORD`]).toBeDefined();
    expect(services.nats!.volumes).toContain("./nats/nats-server.conf:/etc/nats/nats-server.conf:ro");
    // The gateway's token comes from deploy/.env, which must set it (compose stops otherwise).
    expect(services.gateway!.environment!.ATTR_RAG_AUTH_TOKEN).toMatch(/^\$\{ATTR_RAG_GATEWAY_TOKEN:\?/);
    expect(read("compose.env.example")).toMatch(/^ATTR_RAG_GATEWAY_TOKEN=$/m);
    const published = Object.entries(services).filter(([, s]) => (s.ports ?? []).length > 0).map(([name]) => name);
    expect(published).toEqual(["gateway", "prometheus"]);
    // Prometheus only with its profile, and only on this machine's loopback.
    expect(services.prometheus!.profiles).toEqual(["monitoring"]);
    expect(services.prometheus!.ports).toEqual(["127.0.0.1:9090:9090"]);
    const gw = services.gateway!.command!;
    const wk = services.worker!.command!;
    expect(gw[gw.indexOf("--model") + 1]).toBe(wk[wk.indexOf("--model-id") + 1]);
    // The gateway re-ranks with the id the workers serve the cross-encoder under.
    expect(gw[gw.indexOf("--reranker") + 1]).toBe(wk[wk.indexOf("--reranker-id") + 1]);
    expect(gw).toContain("--reranker");
    // The Dockerfiles the compose file and the manifests build exist, and .env stays out of git.
    expect(existsSync(join(DEPLOY, "docker/Dockerfile"))).toBe(true);
    expect(existsSync(join(DEPLOY, "docker/Dockerfile.cuda"))).toBe(true);
    // The CUDA image takes ggml's CUDA backend prebuilt from npm, for the release our addon links against:
    // a runtime base (no nvcc), no llama.cpp compile, the backend chosen by ATTR_RAG_GPU.
    const cudaImage = read("docker/Dockerfile.cuda");
    const cpuPackage = JSON.parse(readFileSync(join(REPO_ROOT, "native/package.json"), "utf8")).dependencies["@node-llama-cpp/linux-x64"];
    expect(cudaImage).toMatch(/^FROM nvidia\/cuda:13[\d.]*-runtime-/m);
    expect(cudaImage).not.toMatch(/devel|nvcc|build-llama-cuda\.sh \//);
    expect(cudaImage).toContain(`npm install --no-save @node-llama-cpp/linux-x64-cuda@${cpuPackage}`);
    expect(cudaImage).toMatch(/ENV ATTR_RAG_GPU=cuda/);
    expect(readFileSync(join(REPO_ROOT, ".gitignore"), "utf8")).toMatch(/^deploy\/\.env$/m);
  });

  it("deploy - monitoring: every role serves /metrics on 9464 (compose, kustomize, sharded); Prometheus and the PodMonitor find each role", () => {
    const metricsFlags = (args: readonly string[], where: string) => {
      expect(args[args.indexOf("--metrics-port") + 1], where).toBe("9464");
      expect(args[args.indexOf("--metrics-host") + 1], where).toBe("0.0.0.0");
    };
    for (const file of ["compose.yaml", "compose.sharded.yaml"]) {
      const services = parse(read(file), { merge: true }).services as Record<string, { command?: string[] }>;
      for (const [name, s] of Object.entries(services)) if (s.command !== undefined && /^(serve|worker|selector|index)$/.test(s.command[0]!)) metricsFlags(s.command, `${file} ${name}`);
    }
    const manifests = ["k8s/base/gateway.yaml", "k8s/base/worker.yaml", "k8s/base/selector.yaml", "k8s/base/index.yaml", "k8s/sharded/index-shard-0.yaml", "k8s/sharded/index-shard-1.yaml"];
    for (const file of manifests) {
      const workload = docs(file).find((o) => o.kind === "Deployment" || o.kind === "StatefulSet")!;
      const pod = workload.spec.template as { metadata: { annotations: Record<string, string> }; spec: { containers: Container[] } };
      const c = pod.spec.containers[0]!;
      metricsFlags(c.args, file);
      expect(c.ports!.find((p) => p.name === "metrics")?.containerPort, file).toBe(9464);
      expect(pod.metadata.annotations, file).toEqual({ "prometheus.io/scrape": "true", "prometheus.io/port": "9464", "prometheus.io/path": "/metrics" });
    }
    // The PodMonitor selects the label kustomize puts on every pod template.
    const kustomization = parse(read("k8s/base/kustomization.yaml"));
    expect(kustomization.labels[0]).toMatchObject({ pairs: { "app.kubernetes.io/part-of": "attr-rag" }, includeTemplates: true });
    const [monitor] = docs("k8s/monitoring/podmonitor.yaml");
    expect(monitor!.kind).toBe("PodMonitor");
    expect(monitor!.spec.selector.matchLabels).toEqual({ "app.kubernetes.io/part-of": "attr-rag" });
    expect(monitor!.spec.podMetricsEndpoints[0]).toMatchObject({ port: "metrics", path: "/metrics" });
    // Compose's Prometheus scrapes the four roles on the port they serve.
    const prometheus = parse(read("prometheus/prometheus.yml")) as { scrape_configs: { job_name: string; static_configs?: { targets: string[] }[]; dns_sd_configs?: { names: string[]; port: number }[] }[] };
    const jobs = new Map(prometheus.scrape_configs.map((j) => [j.job_name, j]));
    for (const role of ROLES) {
      const job = jobs.get(`attr-rag-${role}`);
      expect(job, role).toBeDefined();
      const targets = [...(job!.static_configs ?? []).flatMap((c) => c.targets), ...(job!.dns_sd_configs ?? []).flatMap((c) => c.names.map((n) => `${n}:${c.port}`))];
      expect(targets, role).toEqual([`${role}:9464`]);
    }
    // The dashboard is Grafana JSON whose every panel queries Prometheus (the queries themselves run against a
    // real Prometheus in observability.test.ts).
    const dashboard = JSON.parse(read("grafana/attr-rag-dashboard.json")) as { uid: string; panels: { title: string; targets: { expr: string }[] }[] };
    expect(dashboard.uid).toBe("attr-rag");
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(10);
    for (const p of dashboard.panels) expect(p.targets.length, p.title).toBeGreaterThan(0);
  });

  it("deploy - the sharded variants: a StatefulSet per shard (replicas with a volume each), compose's four replicas, every --shard and --index-shards agreeing", () => {
    const kustomization = parse(read("k8s/sharded/kustomization.yaml"));
    expect(kustomization.resources).toEqual(["../base", "index-shard-0.yaml", "index-shard-1.yaml"]);
    for (const [i, file] of ["index-shard-0.yaml", "index-shard-1.yaml"].entries()) {
      const [set] = docs(join("k8s/sharded", file));
      expect(set!.kind).toBe("StatefulSet");
      const spec = set!.spec as { replicas: number; volumeClaimTemplates: unknown[]; template: { spec: { containers: { args: string[]; env: { name: string; value?: string }[] }[] } } };
      expect(spec.replicas).toBeGreaterThanOrEqual(2);
      expect(spec.volumeClaimTemplates).toHaveLength(1);
      const c = spec.template.spec.containers[0]!;
      expectValidCommand(c.args, file);
      expect(c.args[c.args.indexOf("--shard") + 1]).toBe(`${i}/2`);
      expect(c.args).toContain("--create");
      expect(c.env.find((e) => e.name === "ATTR_RAG_NATS_USER")!.value).toBe("index");
    }
    // Gateway and selector are told the shard count by JSON patches appending --index-shards 2.
    const patched = (kustomization.patches as { target: { name: string }; patch: string }[]).filter((p) => /gateway|selector/.test(p.target.name));
    expect(patched).toHaveLength(2);
    for (const p of patched) expect(parse(p.patch).map((op: { value: string }) => op.value)).toEqual(["--index-shards", "2"]);
    const compose = parse(read("compose.sharded.yaml"), { merge: true }).services as Record<string, { command?: string[]; environment?: Record<string, string>; profiles?: string[]; volumes?: string[] }>;
    expect(compose.index!.profiles).toEqual(["unsharded"]);
    const replicas = Object.entries(compose).filter(([name]) => /^index-\d/.test(name));
    expect(replicas.map(([, s]) => s.command![s.command!.indexOf("--shard") + 1]).sort()).toEqual(["0/2", "0/2", "1/2", "1/2"]);
    expect(new Set(replicas.map(([, s]) => s.volumes![0]))).toHaveProperty("size", 4);
    for (const [name, s] of replicas) {
      expectValidCommand(s.command!, `compose.sharded ${name}`);
      expect(s.environment!.ATTR_RAG_NATS_USER).toBe("index");
    }
    for (const role of ["gateway", "selector"]) {
      const cmd = compose[role]!.command!;
      expectValidCommand(cmd, `compose.sharded ${role}`);
      expect(cmd[cmd.indexOf("--index-shards") + 1]).toBe("2");
    }
  });

  it("deploy - deploy/local/cluster is executable and runs attr-rag cluster", () => {
    const script = read("local/cluster");
    expect(statSync(join(DEPLOY, "local/cluster")).mode & 0o111).not.toBe(0);
    expect(script.startsWith("#!/usr/bin/env bash")).toBe(true);
    expect(script).toMatch(/exec node "\$main" cluster "\$@"/);
    expectValidCommand(["cluster", "--workers", "2", "--store", "s", "--model", "m", "--reranker", "r", "--port", "0", "--threads", "1", "--quiet"], "deploy/local/cluster usage");
    expect(script).toContain("[--reranker PATH|NAME]");
  });
});
