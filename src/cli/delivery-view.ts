/**
 * A delivery as `deliver` and `run` print it for a person.
 */
import type { DeliveryResult } from '../deliver/index.js';

/** One line for a person: where, how many, what was sent now. */
export function describeDelivery(result: DeliveryResult): string {
  const what = result.approvedOnly ? 'approved output(s)' : 'output(s)';
  const missing =
    result.missing.length > 0
      ? `; not in the output folder, not delivered: ${result.missing.join(', ')}`
      : '';
  return `delivered: ${result.outputs} ${what} and the manifest to ${result.destination} (${result.sent} object(s) sent, ${result.unchanged} already there)${missing}`;
}
