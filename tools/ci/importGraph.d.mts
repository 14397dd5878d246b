// Types for importGraph.mjs (used by packages/cli/test/importGraph.test.ts).
export declare function sourceFiles(dir: string): string[];
export declare function specifiers(text: string): string[];
export declare function importGraph(files: Map<string, string>): { graph: Map<string, string[]>; packages: Map<string, string[]> };
export declare function circles(graph: Map<string, string[]>): string[][];
export declare function readPackages(packagesDir: string): Map<string, string>;
