import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'src/index.ts', cli: 'src/cli.ts', 'documents-child': 'src/documents-child.ts' },
    format: ['esm'],
    dts: { entry: { index: 'src/index.ts' } },
    sourcemap: true,
    // The inspector's build (below) writes dist/inspector at the same time.
    clean: ['!inspector/**'],
    target: 'node20',
    // The OpenTelemetry SDK is optional and loaded only when OTEL_* asks for traces: never bundled.
    external: [/^@memory-agents\//, /^@opentelemetry\//],
    banner: ({ format }) => ({ js: format === 'esm' ? '' : '' }),
  },
  {
    // The inspector served at /inspect: one browser module, its page and its stylesheet.
    entry: { app: 'inspector/app.ts' },
    outDir: 'dist/inspector',
    publicDir: 'inspector/public',
    tsconfig: 'inspector/tsconfig.json',
    format: ['esm'],
    platform: 'browser',
    // The typed client is bundled in (tsup leaves the package's dependencies external otherwise,
    // and a browser cannot resolve a bare specifier).
    noExternal: ['@memory-agents/client'],
    target: 'es2022',
    minify: true,
    sourcemap: false,
    dts: false,
    clean: true,
  },
]);
