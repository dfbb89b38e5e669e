// Types of packages.mjs, for the TypeScript files that import it (vitest.config.ts, the layout test).
export declare const PACKAGES: readonly string[];
export declare function entryPoints(name: string): { specifier: string; source: string }[];
