#!/usr/bin/env node
// Thin launcher: the CLI lives in dist/ (built by `npm install` via `prepare`),
// bundled into a few files (scripts/bundle-cli.ts).
import { setFlagsFromString } from 'node:v8';
import { main } from '../dist/bundle/cli.js';

// A full collection once the heap is 1.3× what the last one kept, not the up
// to 4× V8 allows when collecting is cheap: a long run's garbage otherwise
// takes the process far past what it keeps alive before the next full
// collection (figures in docs/benchmarks.md). Costs a few more collections.
setFlagsFromString('--heap-growing-percent=30');

await main();
