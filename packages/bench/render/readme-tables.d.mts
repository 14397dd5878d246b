// Types for readme-tables.mjs (used by packages/cli/test/readmeTables.test.ts).
export declare const REPO_ROOT: string;
export declare const RESULTS_DIR: string;
export declare const BLOCKS: Record<string, { files: string[]; render: (results: { file: string; data: unknown; prefix?: string }[]) => string }>;
export declare function loadResult(file: string): any;
export declare function docFiles(): string[];
export declare function renderReadme(readme: string, load?: (file: string) => any, options?: { prefix?: string; every?: boolean }): string;
export declare function renderDocs(load?: (file: string) => any): { file: string; text: string; rendered: string }[];
