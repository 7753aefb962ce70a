/**
 * The reference does not say which bucket the X-RateLimit headers describe.
 * We read them as the bucket among the request's buckets whose limit equals
 * `X-RateLimit-Limit`, else the account-wide `requests` bucket (the local
 * gate reads them the same way).
 */
import type { Bucket, RateLimits } from '../contract/index.js';
import type { RateFeedback } from '../shared/index.js';

export function feedbackBucket(feedback: RateFeedback, limits: RateLimits): Bucket {
  if (feedback.limit !== undefined && feedback.limit !== limits.requests.count) {
    const match = feedback.buckets.find(
      (b) => b !== 'requests' && limits[b].count === feedback.limit,
    );
    if (match) return match;
  }
  return 'requests';
}
