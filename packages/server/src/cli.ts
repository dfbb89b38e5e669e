#!/usr/bin/env node
// The `memory-agents` command: the process around `main` (cli-main.ts, importable without effects).
import { main } from './cli-main.js';

process.exitCode = await main(process.argv.slice(2));
