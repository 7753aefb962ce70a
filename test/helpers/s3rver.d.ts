/** The part of s3rver 3.x (no published types) the test S3 server uses. */
declare module 's3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface S3rverOptions {
    silent?: boolean;
    directory: string;
    configureBuckets?: { name: string; configs?: string[] }[];
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    /** Creates `configureBuckets` (what `run()` does before listening). */
    configureBuckets(): Promise<void>;
    /** The Koa app's request handler. */
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
