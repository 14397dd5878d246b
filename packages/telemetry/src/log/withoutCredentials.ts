/**
 * A server URL fit for a log line or a status answer: "nats://alice:s3cret@host:4222" becomes
 * "nats://host:4222" (a URL list is handled item by item). Text that is not a URL is returned as is.
 */
export function withoutCredentials(urls: string): string {
  return urls
    .split(",")
    .map((u) => u.replace(/^(\s*[a-z][a-z0-9+.-]*:\/\/)[^@/\s]*@/i, "$1").replace(/^(\s*)[^@/\s:]+:[^@/\s]*@/, "$1"))
    .join(",");
}
