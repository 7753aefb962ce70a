/**
 * @module notify
 * A message when a `run` ends (finished or stopped): the interface's JSON
 * event, or a Slack message, POSTed to each receiver within a few seconds,
 * signed when `IBATCH_NOTIFY_SECRET` is set. See docs/notify.md.
 */

export { type RunDeliveryFacts, type RunEndEvent, type RunEndFacts, runEndEvent } from './event.js';
export {
  type Delivery,
  NOTIFY_TOTAL_MS,
  SIGNATURE_HEADER,
  sendNotifications,
  signature,
} from './send.js';
