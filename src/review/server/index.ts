/**
 * @module review/server
 * `ibatch review`: the local review page and its JSON listing. Reads the
 * journal, writes review decisions to it, serves the output folder's files;
 * never talks to the service.
 */
export { buildListing, type ReviewedOutput, type ReviewListing } from './listing.js';
export { checkHost, newToken } from './security.js';
export { type RunningReviewServer, startReviewServer } from './server.js';
