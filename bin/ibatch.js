#!/usr/bin/env node
// Thin launcher: the CLI lives in dist/ (built by `npm install` via `prepare`).
import { setFlagsFromString } from 'node:v8';
import { main } from '../dist/cli/main.js';

// A full collection once the heap is 1.5× what the last one kept, not the up
// to 4× V8 allows when collecting is cheap: a 20,000-item run keeps about
// 90 MB alive, and its garbage took the process to 500 MB before the first
// full collection (issue 17.2). Costs a few more collections.
setFlagsFromString('--heap-growing-percent=50');

await main();
