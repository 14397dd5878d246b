// One `attr-rag …` process of a local cluster: its output kept (the last part, for readiness checks and
// failure messages) and optionally echoed line by line under its name, and a stop that waits for the exit.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * The program every cluster process runs: this checkout's `attr-rag` (packages/cli/dist/main.js, built by
 * `npm run build`). This package starts it as it starts nats-server: the command line sits above this
 * package, so it is run, never imported.
 */
export const CLI_MAIN = fileURLToPath(new URL("../../cli/dist/main.js", import.meta.url));

/** Output kept per process: enough for readiness patterns and a failure report, bounded for long runs. */
const KEPT_CHARS = 256 * 1024;

export class ClusterProcess {
  #out = "";
  #err = "";
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    echo?: (line: string) => void,
  ) {
    const keep = (kept: string, d: Buffer) => {
      const next = kept + d.toString();
      return next.length > KEPT_CHARS ? next.slice(-KEPT_CHARS) : next;
    };
    let partial = "";
    const forward = (d: Buffer) => {
      if (echo === undefined) return;
      const lines = (partial + d.toString()).split("\n");
      partial = lines.pop()!;
      for (const line of lines) echo(`[${name}] ${line}`);
    };
    child.stdout!.on("data", (d: Buffer) => {
      this.#out = keep(this.#out, d);
      forward(d);
    });
    child.stderr!.on("data", (d: Buffer) => {
      this.#err = keep(this.#err, d);
      forward(d);
    });
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  /** `attr-rag ARGS` as a child: ATTR_RAG_* variables are cleared so only ARGS (and `env`) count. */
  static spawn(name: string, args: readonly string[], options: { env?: Record<string, string>; echo?: (line: string) => void; detached?: boolean } = {}): ClusterProcess {
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ATTR_RAG_"))), ...options.env };
    return new ClusterProcess(name, spawn(process.execPath, [CLI_MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env, detached: options.detached ?? false }), options.echo);
  }

  get stdout(): string {
    return this.#out;
  }

  get stderr(): string {
    return this.#err;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the first match in stdout or stderr; rejects if the process exits first or time runs out. */
  async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(this.#out) ?? pattern.exec(this.#err);
      if (m !== null) return m;
      if (!this.running) throw new Error(`${this.name} exited (code ${this.child.exitCode ?? this.child.signalCode}) before it printed ${pattern}:\n${this.#out}${this.#err}`);
      if (Date.now() > deadline) throw new Error(`${this.name} did not print ${pattern} within ${timeoutMs / 1000} s:\n${this.#out}${this.#err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends `signal` and waits for the exit; SIGKILL follows if it has not exited after `killAfterMs`. */
  async stop(signal: NodeJS.Signals = "SIGTERM", killAfterMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.child.kill(signal);
    const timer = signal === "SIGKILL" ? undefined : setTimeout(() => this.child.kill("SIGKILL"), killAfterMs);
    await this.exited;
    if (timer !== undefined) clearTimeout(timer);
  }
}
