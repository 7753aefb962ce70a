/**
 * All or nothing (`run --all-or-nothing`, `allOrNothing: true`): a run starts
 * only when `plan`'s total for it fits the budget left, `--max-spend` and the
 * balance. When it does not, this error stops the invocation before anything
 * is recorded or spent, carrying the plan so the CLI can print its figures.
 */
import { EXIT, IbatchError } from '../shared/index.js';
import { verdictLine } from './format.js';
import type { Plan } from './plan.js';

export class PlanDoesNotFitError extends IbatchError {
  constructor(
    readonly plan: Plan,
    readonly jobName: string,
  ) {
    super(
      'plan_does_not_fit',
      `all or nothing: the next run does not fit (${verdictLine(plan)}); nothing was started, nothing spent`,
      EXIT.credits,
    );
  }
}
