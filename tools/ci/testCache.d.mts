// Types for testCache.mjs (used by the gateway's and the CLI's test helpers).
export declare function fromRunCache(key: string, dest: string, build: (dest: string) => Promise<void>): Promise<"built" | "copied">;
