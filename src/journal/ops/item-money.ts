/**
 * An item's charged and refunded totals from its attempts, the source of
 * truth, so a replayed or repeated record never counts twice: the SET of an
 * UPDATE of the item named by `@runId` and `@itemKey` (an op that updates
 * the item anyway sets them in the same statement).
 */
export const ITEM_MONEY = `charged_credits = (SELECT COALESCE(SUM(a.charged_cost), 0) FROM attempts a
                          WHERE a.item_row = items.rowid),
       refunded_credits = (SELECT COALESCE(SUM(a.refunded_credits), 0) FROM attempts a
                           WHERE a.item_row = items.rowid)`;
