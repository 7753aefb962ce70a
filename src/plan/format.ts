/** How a plan is shown: a table for people, one JSON document for scripts. */
import type { Plan } from './plan.js';
import { TRAINING_ESTIMATE_ENV, trainingPriceText } from './training-price.js';

/** The `--json` document of the public CLI interface (plus a few extra properties). */
export function planJson(plan: Plan): Record<string, unknown> {
  return {
    total: plan.total,
    budget: plan.budget,
    balance: plan.balance,
    quotes: plan.quotes,
    verdict: plan.verdict,
    remaining: plan.remaining,
    spent: plan.spent,
    maxSpend: plan.maxSpend,
    next: plan.next,
    trainings: plan.trainings,
    trainingPrice: {
      credits: plan.trainings.price,
      estimated: plan.trainings.estimated,
      source: plan.trainings.priceFrom,
    },
    steps: plan.steps.map((s) => ({
      id: s.id,
      model: s.modelId,
      items: s.items,
      outputs: s.outputs,
      cost: s.cost,
      unitCosts: s.unitCosts,
      unquoted: s.unquoted,
      ...(s.unquotedReason ? { unquotedReason: s.unquotedReason } : {}),
      new: s.counts.new,
      changed: s.counts.changed,
      retry: s.counts.retry,
      rejected: s.counts.rejected,
      done: s.counts.done,
      removed: s.counts.removed,
      fresh: s.counts.fresh,
      open: s.counts.open,
    })),
    removedSteps: plan.removedSteps,
  };
}

const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** Table columns shown only when some step has such items. */
const OPTIONAL_COUNTS = [
  ['rejected', 'rejected'],
  ['fresh', 'fresh'],
  ['open', 'resumed'],
] as const;

export function formatPlan(plan: Plan, jobName: string): string {
  const optional = OPTIONAL_COUNTS.filter(([key]) => plan.steps.some((s) => s.counts[key] > 0));
  const rows = plan.steps.map((s) => [
    s.id,
    s.modelId,
    String(s.counts.new),
    String(s.counts.changed),
    String(s.counts.retry),
    ...optional.map(([key]) => String(s.counts[key])),
    String(s.counts.done),
    String(s.counts.removed),
    String(s.items),
    String(s.outputs),
    s.unitCosts.length === 0
      ? '-'
      : s.unitCosts.length === 1
        ? num(s.unitCosts[0] as number)
        : `${num(s.unitCosts[0] as number)}-${num(s.unitCosts.at(-1) as number)}`,
    s.unquoted > 0 ? `${num(s.cost)} + ${s.unquoted} at run time` : num(s.cost),
  ]);
  const header = [
    'step',
    'model',
    'new',
    'changed',
    'retry',
    ...optional.map(([, title]) => title),
    'done',
    'removed',
    'make',
    'outputs',
    'unit cost',
    'subtotal',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ');
  const out = [`plan for ${jobName}: ${nextRunLine(plan)}`, '', line(header), ...rows.map(line)];
  for (const s of plan.removedSteps)
    out.push(`${s.id}: ${s.removed} item(s) of a step no longer in the job file`);
  out.push('');
  const t = plan.trainings;
  if (t.count > 0 || t.reused > 0) {
    const price = { credits: t.price, estimated: t.estimated, source: t.priceFrom };
    out.push(
      `trainings ${t.count} x ${num(t.price)} = ${num(t.cost)}` +
        (t.reused > 0 ? `; ${t.reused} reused (cost 0)` : '') +
        `; price ${trainingPriceText(price)}`,
    );
    if (t.estimated)
      out.push(
        'note: no preview exists for trainings: their price is an estimate until this',
        `      account is charged for one (set trainingEstimate: or $${TRAINING_ESTIMATE_ENV})`,
      );
  }
  out.push(`total     ${num(plan.total)} credits`);
  out.push(`budget    ${budgetLine(plan)}`);
  if (plan.maxSpend !== null) out.push(`max-spend ${num(plan.maxSpend)} (this invocation)`);
  out.push(`balance   ${num(plan.balance)}`);
  out.push(`quotes    ${plan.quotes} (one per price class)`);
  const removed = plan.steps.reduce((n, s) => n + s.counts.removed, 0);
  if (removed > 0)
    out.push(`note: ${removed} item(s) no longer in the job file are left as they are`);
  for (const s of plan.steps) {
    if (s.unquoted > 0)
      out.push(
        `note: ${s.unquoted} item(s) of ${s.id} can only be priced at run time: ${s.unquotedReason ?? ''}`,
      );
  }
  out.push(`verdict   ${verdictLine(plan)}`);
  return `${out.join('\n')}\n`;
}

function nextRunLine(plan: Plan): string {
  if (plan.next.kind === 'resume') return `the next run resumes run ${plan.next.resumes ?? ''}`;
  if (plan.next.kind === 'nothing') return 'nothing to do, every item is done';
  return 'the next run is a new run';
}

function budgetLine(plan: Plan): string {
  if (plan.budget === null) return 'none';
  const spent = plan.spent > 0 ? `; ${num(plan.spent)} spent by earlier runs` : '';
  return `${num(plan.budget)} (${num(plan.remaining ?? plan.budget)} left${spent})`;
}

/** The verdict as `plan` prints it (`OVER BUDGET: 2108 > budget left 2000`). */
export function verdictLine(plan: Plan): string {
  const total = num(plan.total);
  const caps: string[] = [];
  if (plan.remaining !== null && plan.total > plan.remaining)
    caps.push(`budget left ${num(plan.remaining)}`);
  if (plan.maxSpend !== null && plan.total > plan.maxSpend)
    caps.push(`--max-spend ${num(plan.maxSpend)}`);
  const balance = `balance ${num(plan.balance)}`;
  const verdicts: Record<Plan['verdict'], string> = {
    ok: 'OK: the total fits the budget and the balance',
    'over-budget': `OVER BUDGET: ${total} > ${caps.join(' and ')}`,
    'over-balance': `OVER BALANCE: ${total} > ${balance}`,
    'over-budget-and-balance': `OVER BUDGET AND BALANCE: ${total} > ${[...caps, balance].join(' and ')}`,
  };
  return verdicts[plan.verdict];
}
