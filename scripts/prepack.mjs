// Runs in a package directory before `npm pack`/`npm publish`: copies the repository's LICENSE in,
// so every published package carries the license its `license` field names.
import { copyFileSync } from 'node:fs';

copyFileSync(new URL('../LICENSE', import.meta.url), 'LICENSE');
