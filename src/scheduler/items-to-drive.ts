/**
 * What a run drives, read from the journal: its items not ended yet (with
 * their recorded request) and the sources they wait on that nobody makes now.
 */
import type { JobItem, LoadedStep } from '../job/index.js';
import { ITEM_STATE, isStateIn, type Journal, TERMINAL_ITEM_STATES } from '../journal/index.js';
import type { DesiredState } from '../plan/index.js';
import { outputIdsReader } from './decide/next-run.js';
import { settleGraph } from './generation-item.js';
import type { ItemGraph } from './item-graph.js';

export type Driven = { readonly item: JobItem; readonly step: LoadedStep };

/** The item states a run still drives (the rest ended). */
const NOT_ENDED = Object.values(ITEM_STATE).filter((s) => !isStateIn(TERMINAL_ITEM_STATES, s));

/**
 * What a run drives: the job items it holds that are not ended, with their
 * recorded request, and the paid attempts of items the job file changed or
 * dropped since (finished as they were sent, no retry). `ended` counts the
 * items of the run that ended already: they, like every other job item,
 * settle only for the items that wait on them (`settleSources`). Only the
 * items not ended are read whole: a resume at item 15,000 of 20,000 parsed
 * 15,000 requests it does not send.
 */
export function itemsToDrive(
  journal: Journal,
  runId: string,
  jobItems: ReadonlyMap<string, JobItem>,
  steps: ReadonlyMap<string, LoadedStep>,
  identity: (item: JobItem) => string,
): { driven: Driven[]; ended: number } {
  let ended = 0;
  for (const { stepId, states } of journal.progressByStep(runId)) {
    if (steps.has(stepId)) for (const state of TERMINAL_ITEM_STATES) ended += states[state] ?? 0;
  }
  const driven: Driven[] = [];
  for (const record of journal.listItems(runId, { states: NOT_ENDED })) {
    const jobItem = jobItems.get(record.itemKey);
    const step = steps.get(record.stepId);
    if (!step) continue;
    if (jobItem && identity(jobItem) === record.requestHash) {
      // Sent as recorded: the job file's request, or a rejected item's remake (remake.ts).
      const request = record.request as JobItem['request'];
      driven.push({ item: { ...jobItem, request }, step });
    } else if (journal.getOpenAttempt(runId, record.itemKey)) {
      driven.push({ item: asSent(record, jobItem), step: { ...step, retries: 0 } });
    }
  }
  return { driven, ended };
}

/**
 * Settles in the graph the sources the driven items wait on and nobody will
 * make now: items of the run that ended already, done ones with their
 * recorded outputs, and job items this run does not make. Only those: a
 * resume at item 15,000 of 20,000 read every ended item's outputs before its
 * first create.
 */
export function settleSources(
  journal: Journal,
  runId: string,
  driven: readonly Driven[],
  sources: ReadonlySet<string>,
  steps: ReadonlyMap<string, LoadedStep>,
  jobItems: ReadonlyMap<string, JobItem>,
  state: DesiredState,
  graph: ItemGraph,
): void {
  const drivenKeys = new Set(driven.map(({ item }) => item.key));
  const outputIds = outputIdsReader(journal);
  for (const key of sources) {
    if (drivenKeys.has(key)) continue;
    // An item of the run (of a step of the job) that ended: settled as it ended.
    const stored = journal.getItem(runId, key);
    if (stored && steps.has(stored.stepId) && isStateIn(TERMINAL_ITEM_STATES, stored.state)) {
      settleGraph({ journal, runId }, graph, key, stored.state, stored.error);
      continue;
    }
    const latest = state.latest.get(key);
    if (state.verdicts.get(key) === 'done' && latest) {
      graph.succeeded(key, { generationIds: outputIds(latest.runId, key) });
    } else {
      const source = jobItems.get(key);
      const name = source ? `${source.stepId}/${source.label}` : key;
      graph.failed(key, `${name} is not made by this run`);
    }
  }
}

/** A journal item as its open attempt was sent (the job file describes it differently now). */
function asSent(
  record: ReturnType<Journal['listItems']>[number],
  jobItem: JobItem | undefined,
): JobItem {
  return {
    stepId: record.stepId,
    key: record.itemKey,
    label: record.label,
    name: jobItem?.name ?? record.label,
    modelId: record.modelId ?? jobItem?.modelId ?? '',
    kind: (record.kind === 'video' ? 'video' : 'image') as JobItem['kind'],
    request: record.request as JobItem['request'],
    expectedOutputs: record.expectedOutputs,
    vars: jobItem?.vars ?? {},
    countIndex: jobItem?.countIndex ?? 0,
    mediaRefs: [],
  };
}
