// IPv6 addresses as their 16 bytes, so that the IPv4 address some of them carry is found whatever way the
// address is written (URL parsers rewrite "::ffff:127.0.0.1" as "::ffff:7f00:1"; both are the same bytes).

/** The 16 bytes of an IPv6 address that `net.isIP` accepts (a zone index such as "%eth0" is dropped). */
export function ipv6Bytes(address: string): Uint8Array {
  let text = address.replace(/%.*$/, "");
  // A trailing dotted quad is the last two 16-bit groups.
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    const [a, b, c, d] = tail.split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const halves = text.split("::");
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const words = halves.length === 2 ? [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest] : head;
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

/** The bytes written as an IPv6 address (eight full groups: no shorthand to get wrong). */
export function ipv6Text(bytes: Uint8Array): string {
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return words.join(":");
}

const startsWith = (bytes: Uint8Array, prefix: readonly number[]) => prefix.every((b, i) => bytes[i] === b);
const ipv4At = (bytes: Uint8Array, at: number, flip = 0) => [0, 1, 2, 3].map((i) => bytes[at + i]! ^ flip).join(".");

/**
 * The IPv4 address an IPv6 address stands for or is routed to, when it has one: IPv4-mapped (::ffff:0:0/96),
 * NAT64 (64:ff9b::/96, the last 32 bits), 6to4 (2002::/16, the 32 bits after the prefix) and Teredo
 * (2001::/32, the client's address, stored inverted in the last 32 bits).
 */
export function embeddedIpv4(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])) return ipv4At(bytes, 12);
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return ipv4At(bytes, 12);
  if (startsWith(bytes, [0x20, 0x02])) return ipv4At(bytes, 2);
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) return ipv4At(bytes, 12, 0xff);
  return undefined;
}
