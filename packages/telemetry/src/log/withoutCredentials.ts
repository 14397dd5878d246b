const SCHEME = /^\s*[a-z][a-z0-9+.-]*:\/\//i;

/**
 * A server URL fit for a log line, an error message or a status answer: "nats://alice:s3cret@host:4222" becomes
 * "nats://host:4222" (a comma-separated URL list is handled item by item). Text that is not a URL is returned
 * as is.
 *
 * The user part ends at the item's last `@`, not at the first `/`, `?` or `:`: a password typed unencoded may
 * hold any of those (and `@` itself), and cutting too much of a server URL is harmless where cutting too
 * little prints a secret. Only a `,` cannot be told from the list separator; it must be written %2C.
 */
export function withoutCredentials(urls: string): string {
  return urls.split(",").map(withoutUserPart).join(",");
}

function withoutUserPart(item: string): string {
  const at = item.lastIndexOf("@");
  if (at < 0) return item;
  const scheme = SCHEME.exec(item);
  if (scheme !== null) return scheme[0] + item.slice(at + 1);
  // Without a scheme, "user:pass@host:4222" or "token@host:4222" is a URL (the NATS client reads it so); a
  // phrase with spaces around an `@` is not.
  const lead = /^\s*/.exec(item)![0];
  const rest = item.slice(lead.length);
  return /\s/.test(rest.trimEnd()) ? item : lead + item.slice(at + 1);
}
