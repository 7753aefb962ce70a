/** How a plan is shown: a table for people, one JSON document for scripts. */
import type { Plan } from './plan.js';

/** The `--json` document of the public CLI interface (plus a few extra properties). */
export function planJson(plan: Plan): Record<string, unknown> {
  return {
    total: plan.total,
    budget: plan.budget,
    balance: plan.balance,
    quotes: plan.quotes,
    verdict: plan.verdict,
    trainings: plan.trainings,
    steps: plan.steps.map((s) => ({
      id: s.id,
      model: s.modelId,
      items: s.items,
      outputs: s.outputs,
      cost: s.cost,
      unitCosts: s.unitCosts,
      unquoted: s.unquoted,
      ...(s.unquotedReason ? { unquotedReason: s.unquotedReason } : {}),
    })),
  };
}

const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

export function formatPlan(plan: Plan, jobName: string): string {
  const rows = plan.steps.map((s) => [
    s.id,
    s.modelId,
    String(s.items),
    String(s.outputs),
    s.unitCosts.length === 0
      ? '-'
      : s.unitCosts.length === 1
        ? num(s.unitCosts[0] as number)
        : `${num(s.unitCosts[0] as number)}-${num(s.unitCosts.at(-1) as number)}`,
    s.unquoted > 0 ? `${num(s.cost)} + ${s.unquoted} at run time` : num(s.cost),
  ]);
  const header = ['step', 'model', 'items', 'outputs', 'unit cost', 'subtotal'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ');
  const out = [`plan for ${jobName}`, '', line(header), ...rows.map(line), ''];
  out.push(`total     ${num(plan.total)} credits`);
  out.push(`budget    ${plan.budget === null ? 'none' : num(plan.budget)}`);
  out.push(`balance   ${num(plan.balance)}`);
  out.push(`quotes    ${plan.quotes} (one per price class)`);
  if (plan.trainings > 0)
    out.push(
      `trainings ${plan.trainings} (charged by the service when started; not included above)`,
    );
  for (const s of plan.steps) {
    if (s.unquoted > 0)
      out.push(
        `note: ${s.unquoted} item(s) of ${s.id} can only be priced at run time: ${s.unquotedReason ?? ''}`,
      );
  }
  const verdicts: Record<Plan['verdict'], string> = {
    ok: 'OK: the total fits the budget and the balance',
    'over-budget': `OVER BUDGET: ${num(plan.total)} > budget ${num(plan.budget ?? 0)}`,
    'over-balance': `OVER BALANCE: ${num(plan.total)} > balance ${num(plan.balance)}`,
    'over-budget-and-balance': `OVER BUDGET AND BALANCE: ${num(plan.total)} > budget ${num(plan.budget ?? 0)} and balance ${num(plan.balance)}`,
  };
  out.push(`verdict   ${verdicts[plan.verdict]}`);
  return `${out.join('\n')}\n`;
}
