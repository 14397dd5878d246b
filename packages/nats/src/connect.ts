// Connecting to NATS the same way from every role (gateway, worker, selector, index): credentials and TLS
// passed through from the command line, reconnecting forever once connected, and a first-connect failure
// explained in terms of the option that caused it.
import { readFileSync } from "node:fs";
import { connect, credsAuthenticator, nkeyAuthenticator, type NatsConnection, type NodeConnectionOptions } from "@nats-io/transport-node";
import { withoutCredentials } from "@attr-rag/telemetry";

export interface NatsClientOptions {
  /** nats://host:port (comma-separated for a cluster). */
  readonly url: string;
  /** Client name shown by the server's monitoring (role and id). */
  readonly name: string;
  /** A .creds file (JWT + nkey seed), as `nsc` writes them. */
  readonly creds?: string | undefined;
  readonly user?: string | undefined;
  readonly pass?: string | undefined;
  readonly token?: string | undefined;
  /** A file holding an nkey seed (SU…). */
  readonly nkey?: string | undefined;
  /** PEM CA certificate: connect with TLS, trusting it. */
  readonly tlsCa?: string | undefined;
  /** Milliseconds to wait for the first connection. Default 5000. */
  readonly timeoutMs?: number | undefined;
  /**
   * Milliseconds to keep trying while no server can be reached (refused, timed out), for a role started while
   * nats-server restarts; refused credentials, TLS and a bad URL still fail at once. Default 0: fail at once.
   */
  readonly waitForServerMs?: number | undefined;
  /** Told when the first attempt fails and the waiting begins (a role logs it, so a wrong URL shows at once). */
  readonly onWaiting?: ((message: string) => void) | undefined;
}

/**
 * How long a long-running role (gateway, index, worker, selector) waits for a server it cannot reach when it
 * starts. One restarted while nats-server itself restarts (a crash, a rolling upgrade) would otherwise exit,
 * and stay down wherever no supervisor starts it again (`attr-rag cluster`, a plain shell); the soak under
 * faults found an index replica lost that way. A server that answers and refuses is never waited for.
 */
export const ROLE_NATS_WAIT_MS = 60_000;

/** ROLE_NATS_WAIT_MS, or ATTR_RAG_NATS_WAIT_SECONDS when set (0: fail at once, for a supervisor that restarts roles itself). */
export function roleNatsWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = env.ATTR_RAG_NATS_WAIT_SECONDS;
  if (value === undefined || value.trim() === "") return ROLE_NATS_WAIT_MS;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) throw new NatsConnectError(`ATTR_RAG_NATS_WAIT_SECONDS must be a number of seconds ≥ 0, got "${value}"`);
  return seconds * 1000;
}

/** Why NATS could not be reached or refused us; the message names the option to fix. */
export class NatsConnectError extends Error {
  override name = "NatsConnectError";

  constructor(
    message: string,
    /** No server answered at all (as opposed to one that refused us): worth trying again. */
    readonly unreachable = false,
  ) {
    super(message);
  }
}

export async function connectNats(o: NatsClientOptions): Promise<NatsConnection> {
  const options: NodeConnectionOptions = {
    servers: o.url.split(",").map((s) => s.trim()).filter((s) => s !== ""),
    name: o.name,
    timeout: o.timeoutMs ?? 5_000,
    // Once connected, never give up: a restarted server is found again and in-flight work is failed by the
    // callers (they watch the connection status), not by the client.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 10_000,
  };
  if (o.user !== undefined || o.pass !== undefined) {
    if (o.user === undefined || o.pass === undefined) throw new NatsConnectError("--nats-user and --nats-pass go together");
    Object.assign(options, { user: o.user, pass: o.pass });
  }
  if (o.token !== undefined) Object.assign(options, { token: o.token });
  if (o.creds !== undefined) options.authenticator = credsAuthenticator(readFile(o.creds, "--nats-creds"));
  if (o.nkey !== undefined) options.authenticator = nkeyAuthenticator(new TextEncoder().encode(readFile(o.nkey, "--nats-nkey").toString("utf8").trim()));
  if (o.tlsCa !== undefined) {
    readFile(o.tlsCa, "--nats-tls-ca");
    options.tls = { caFile: o.tlsCa };
  }
  const waitUntil = Date.now() + (o.waitForServerMs ?? 0);
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect(options);
    } catch (err) {
      const explained = explain(err, o);
      if (!explained.unreachable || Date.now() >= waitUntil) throw explained;
      if (attempt === 1) o.onWaiting?.(`${explained.message}; trying again for up to ${Math.round((o.waitForServerMs ?? 0) / 1000)} s`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 250 * attempt)));
    }
  }
}

function readFile(path: string, option: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new NatsConnectError(`${option}: cannot read ${path}: ${(err as Error).message}`);
  }
}

// Every role prints this message (the CLI on stderr, the gateway in its log), so it names the server by its URL
// without the user part, and the client's own text loses any secret we passed it.
function explain(err: unknown, o: NatsClientOptions): NatsConnectError {
  const message = withoutSecrets(err instanceof Error ? err.message : String(err), o);
  const code = (err as { code?: string }).code ?? "";
  const url = withoutCredentials(o.url);
  const auth = o.creds !== undefined ? "--nats-creds" : o.nkey !== undefined ? "--nats-nkey" : o.token !== undefined ? "--nats-token" : o.user !== undefined ? "--nats-user/--nats-pass" : undefined;
  if (/authoriz|authenticat/i.test(message) || /AUTH/i.test(code)) {
    return new NatsConnectError(
      auth === undefined
        ? `NATS at ${url} requires credentials: pass --nats-creds, --nats-nkey, --nats-token or --nats-user/--nats-pass (${message})`
        : `NATS at ${url} refused the credentials of ${auth} (${message}); check them against the server's accounts`,
    );
  }
  if (/tls|certificate|self.signed|handshake/i.test(message)) {
    return new NatsConnectError(`TLS with NATS at ${url} failed (${message}); check --nats-tls-ca and that the server speaks TLS`);
  }
  if (/invalid url/i.test(message)) {
    return new NatsConnectError(`--nats ${url} is not a valid URL (${message}); write any / @ : , in a user name or password percent-encoded (/ as %2F), or pass them with --nats-user/--nats-pass`);
  }
  return new NatsConnectError(`cannot reach NATS at ${url} (${message}); is nats-server running there? (--nats)`, true);
}

/** The client's message with the password, the token and each URL's user part cut out, should it quote them. */
function withoutSecrets(message: string, o: NatsClientOptions): string {
  const userParts = o.url.split(",").flatMap((item) => {
    const at = item.lastIndexOf("@");
    if (at < 0) return [];
    const user = item.slice(0, at).replace(/^\s*[a-z][a-z0-9+.-]*:\/\//i, "").trim();
    const pass = user.slice(user.indexOf(":") + 1);
    return [user, pass, decoded(user), decoded(pass)];
  });
  const secrets = [o.pass, o.token, ...userParts].filter((s): s is string => s !== undefined && s !== "").sort((a, b) => b.length - a.length);
  return secrets.reduce((text, secret) => text.split(secret).join("[redacted]"), message);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
