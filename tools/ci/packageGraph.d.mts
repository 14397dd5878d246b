// Types for packageGraph.mjs (used by packages/cli/test/packageLayout.test.ts).
export interface WorkspacePackage {
  dir: string;
  name: string;
  declared: string[];
  imported: string[];
  lines: number;
  readme: string | null;
}
export declare function readWorkspace(packagesDir: string): WorkspacePackage[];
export declare function undeclaredImports(packages: readonly WorkspacePackage[], known: ReadonlySet<string>): string[];
export declare function dependencyGraph(packages: readonly WorkspacePackage[]): Map<string, string[]>;
