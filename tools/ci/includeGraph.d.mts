// Types for includeGraph.mjs (used by packages/cli/test/includeGraph.test.ts).
export declare function unitOf(path: string): string;
export declare function includes(text: string): string[];
export declare function includeGraph(files: Map<string, string>): Map<string, string[]>;
export declare function readUnits(dir: string): Map<string, string>;
