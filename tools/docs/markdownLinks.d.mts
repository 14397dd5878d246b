// Types for markdownLinks.mjs (used by packages/cli/test/docsLinks.test.ts).
export declare function proseLines(text: string): { line: string; number: number }[];
export declare function slug(heading: string): string;
export declare function anchors(text: string): Set<string>;
export declare function links(text: string): { target: string; number: number }[];
