#!/usr/bin/env node
// Thin launcher: the CLI lives in dist/ (built by `npm install` via `prepare`).
import { main } from '../dist/cli/main.js';

await main();
