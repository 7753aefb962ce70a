/**
 * A job's items grouped by price class (`quotes.ts`) as they come: per class
 * the first item (the one quoted) and how many items of each step it holds;
 * per step the outputs. Nothing is kept per item, so a plan can group a
 * 100,000-row job straight from `scanJob` without holding its items.
 */
import type { JobItem, ModelCatalog } from '../job/index.js';
import { type QuoteRequest, quoteRequestOf } from './quote-request.js';
import { priceClassOf } from './quotes.js';

export type QuoteResult = { readonly cost: number } | { readonly refused: string };

export interface PriceClass {
  readonly id: string;
  /** The class's first item: its request is the one quoted. */
  readonly first: JobItem;
  readonly request: QuoteRequest;
  readonly itemsByStep: Map<string, number>;
  result?: QuoteResult;
}

/** The price class of an item as a plan quotes it (its quote request's). */
export function priceClassOfItem(catalog: ModelCatalog, item: JobItem): string {
  const request = quoteRequestOf(item);
  return priceClassOf(catalog, request.modelId, request.body);
}

export class PriceClasses {
  readonly #classes = new Map<string, PriceClass>();
  readonly #outputsByStep = new Map<string, number>();

  constructor(readonly catalog: ModelCatalog) {}

  add(item: JobItem): void {
    this.count(priceClassOfItem(this.catalog, item), item, () => item);
  }

  /**
   * Counts an item whose class is known (`priceClassOfItem`); `first` gives
   * the whole item only for a class not seen yet (a plan keeps lean items).
   */
  count(id: string, item: Pick<JobItem, 'stepId' | 'expectedOutputs'>, first: () => JobItem): void {
    let priceClass = this.#classes.get(id);
    if (!priceClass) {
      const whole = first();
      priceClass = { id, first: whole, request: quoteRequestOf(whole), itemsByStep: new Map() };
      this.#classes.set(id, priceClass);
    }
    priceClass.itemsByStep.set(item.stepId, (priceClass.itemsByStep.get(item.stepId) ?? 0) + 1);
    this.#outputsByStep.set(
      item.stepId,
      (this.#outputsByStep.get(item.stepId) ?? 0) + item.expectedOutputs,
    );
  }

  /** Classes in the order of their first item. */
  values(): IterableIterator<PriceClass> {
    return this.#classes.values();
  }

  outputs(stepId: string): number {
    return this.#outputsByStep.get(stepId) ?? 0;
  }
}
