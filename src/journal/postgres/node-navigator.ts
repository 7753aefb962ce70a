/**
 * The `navigator` global Node 21 and later have (`userAgent` "Node.js/22"),
 * in the journal's worker thread on Node 20, which has none. Imported by
 * worker.ts before node-postgres: on finding no `navigator`, node-postgres
 * builds a fetch `Response` to learn whether it runs in a Cloudflare Worker,
 * and that loads Node's bundled fetch (undici) into the thread, most of the
 * cost of loading node-postgres, paid by every journal connection
 * (docs/benchmarks.md, "ninth round").
 */
const scope = globalThis as { navigator?: unknown };
if (scope.navigator === undefined) {
  scope.navigator = { userAgent: `Node.js/${process.versions.node.split('.')[0]}` };
}
