// Types for toolchain.mjs (used by the tests).
export declare const PACKAGE_DIR: string;
export declare const REPO_ROOT: string;
export declare const PROTOS_DIR: string;
export declare const GEN_DIR: string;
export declare class ToolchainError extends Error {}
export declare function resolveBin(packageName: string, binName: string): string;
export declare function resolveBuf(): string;
export declare function resolveTsProtoPlugin(): string;
export declare function runBuf(
  args: string[],
  options?: { cwd?: string; extraPath?: string[] },
): { status: number; stdout: string; stderr: string };
