// Per-role NATS passwords for deploy/nats/nats-server.conf. nats-server parses a `$VAR` reference as a
// config value, not as text: "1e5…" becomes a number, "true" a boolean, a space ends the value, and the
// server refuses to start. So a password must read as a bare word: a letter first, then letters, digits,
// `-` or `_`. Measured with nats-server 2.9.10: a random base64url password started with a digit about
// one run in six and failed there.
import { randomBytes } from "node:crypto";
import { InputError } from "@attr-rag/core";

const BARE_WORD = /^[A-Za-z][A-Za-z0-9_-]{7,}$/;

/** 32 hex digits of randomness behind a letter prefix, so it always parses as a string. */
export function newClusterPassword(): string {
  return `ar-${randomBytes(16).toString("hex")}`;
}

/** Refuses a password nats-server would fail to parse (or a short one), naming the role. */
export function checkClusterPassword(role: string, password: string): void {
  if (!BARE_WORD.test(password)) {
    throw new InputError(
      `the NATS password for ${role} cannot be used in deploy/nats/nats-server.conf: it needs at least 8 characters, ` +
        "a letter first, then only letters, digits, '-' or '_' (nats-server reads it as a config value, so 1e5… or a space would break it)",
      2,
    );
  }
}
