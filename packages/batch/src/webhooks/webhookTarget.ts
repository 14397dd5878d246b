// Which URLs a webhook may call. Only http(s), and never an address inside the network the gateway sits in
// (loopback, private, link-local such as the cloud metadata service 169.254.169.254, unique-local, multicast,
// unspecified) unless an allow-list names the host: a webhook must not become a way to reach internal
// services. An IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4, Teredo) is checked as that IPv4
// address too. Host names are resolved and every address checked, at CreateBatch and again at each delivery,
// which connects to the address that was checked (a name that re-resolves elsewhere changes nothing).
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { embeddedIpv4, ipv6Bytes, ipv6Text } from "./addressBytes.js";

const BLOCKED = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) BLOCKED.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  // Unspecified, loopback and the deprecated IPv4-compatible addresses (::a.b.c.d).
  ["::", 96],
  // NAT64 for local use (RFC 8215): a translator inside the network.
  ["64:ff9b:1::", 48],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) BLOCKED.addSubnet(net, bits, "ipv6");

/** Whether `address` (as a resolver returns it, or a URL's host) is inside the network; anything not an IP address is. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return BLOCKED.check(address, "ipv4");
  const bytes = ipv6Bytes(address);
  const ipv4 = embeddedIpv4(bytes);
  if (ipv4 !== undefined && BLOCKED.check(ipv4, "ipv4")) return true;
  return BLOCKED.check(ipv6Text(bytes), "ipv6");
}

/**
 * A webhook URL refused for good: wrong on its face (scheme, form, credentials) or an internal address. Other
 * failures to reach a receiver, a host name that does not resolve among them, may pass and are retried.
 */
export class WebhookTargetRefused extends Error {
  override readonly name = "WebhookTargetRefused";
}

export interface WebhookTarget {
  readonly url: URL;
  /** The address to connect to (checked), and its family. */
  readonly address: string;
  readonly family: 4 | 6;
}

/** Why `text` cannot be a webhook URL on its face (scheme, form, credentials); undefined when it can. */
export function webhookUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `webhook_url ${JSON.stringify(text.slice(0, 200))} is not a URL`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return `webhook_url must be http or https, not ${url.protocol.replace(/:$/, "")}`;
  if (url.username !== "" || url.password !== "") return "webhook_url must not carry credentials: receivers verify the webhook-signature header instead";
  if (text.length > 2048) return "webhook_url is longer than 2048 characters";
  return undefined;
}

/**
 * Resolves and checks a webhook URL: the address to call. Rejects with WebhookTargetRefused when the URL is
 * refused, with a plain Error when the host name does not resolve (now). `allowedHosts` (host names or
 * addresses, exactly as in the URL) may be internal.
 */
export async function resolveWebhookTarget(text: string, allowedHosts: readonly string[]): Promise<WebhookTarget> {
  const problem = webhookUrlProblem(text);
  if (problem !== undefined) throw new WebhookTargetRefused(problem);
  const url = new URL(text);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  const allowed = allowedHosts.some((h) => h.toLowerCase() === host);
  let addresses: { address: string; family: number }[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (err) {
      throw new Error(`webhook_url host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
    }
  }
  const internal = addresses.filter((a) => isInternalAddress(a.address));
  if (!allowed && internal.length > 0) {
    throw new WebhookTargetRefused(
      `webhook_url ${host} is ${host === internal[0]!.address ? "" : `${internal[0]!.address}, `}an internal address (loopback, private, link-local or the like); ` +
        "a webhook may not call into the gateway's own network unless the gateway allows that host (webhookAllowedHosts, serve --webhook-allowed-hosts)",
    );
  }
  const pick = addresses[0]!;
  return { url, address: pick.address, family: pick.family === 6 ? 6 : 4 };
}
