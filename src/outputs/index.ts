/**
 * @module outputs
 * What a run leaves on disk: output files (named by template, kept inside the
 * output folder, downloaded atomically), `manifest.jsonl` / `manifest.csv`,
 * and `report.html`.
 */

export { isAlreadyDownloaded } from './already-downloaded.js';
export { type CostLine, type CostSummary, type StepCost, summarizeCosts } from './costs.js';
export { csvLine } from './csv.js';
export {
  type CurrentMark,
  CurrentRule,
  type CurrentState,
  currentStateOf,
  type DescribedItems,
  EVERY_ITEM,
  markCurrentRows,
  RETIRED_REASON,
  supersededReason,
} from './current.js';
export { type DownloadOptions, type DownloadResult, downloadOutput } from './download.js';
export { createDownloadQueue } from './download-queue.js';
export * from './errors.js';
export type { FolderRows } from './folder-rows.js';
export {
  isSingleLinkedFile,
  type LeavingLink,
  type OutputTreeShape,
  outputFolderBlocker,
  outputTreeShape,
} from './folder-shape.js';
export { writeFileAtomicSync, writeFileExclusive } from './fs-durable.js';
export { cspHash, html, type RawHtml, raw } from './html.js';
export { MANIFEST_CSV, MANIFEST_JSONL, renderManifest } from './manifest-files.js';
export { MANIFEST_LOCK } from './manifest-lock.js';
export {
  manifestRowsOfText,
  type RawRow,
  readManifest,
  readManifestUncovered,
  retiredItemsOnDisk,
} from './manifest-read.js';
export {
  isRowOfJob,
  MANIFEST_CSV_COLUMNS,
  MANIFEST_STATUSES,
  type ManifestRow,
  ManifestRowSchema,
  manifestRowKey,
} from './manifest-row.js';
export {
  downloadedOutputRow,
  type OutputFacts,
  type RowSource,
  readOutputFacts,
  succeededAttempt,
} from './manifest-row-of-item.js';
export {
  describedOrRetiredOnDisk,
  folderManifestRows,
  folderRowSource,
  folderRuns,
  keptRows,
  readerOutputDir,
  recordedElsewhere,
  recordedOutputDir,
  runsInFolder,
} from './manifest-rows.js';
export { type AppendResult, ManifestWriter } from './manifest-writer.js';
export {
  DEFAULT_OUTPUT_TEMPLATE,
  fixedFolderOf,
  type OutputNameValues,
  outputTemplateCheck,
  outputTemplateProblem,
  placeholderPattern,
  planOutputFile,
  renderOutputPath,
  resolveInside,
  TEMPLATE_FIELDS,
  type TemplateField,
  templatePlaceholders,
  validateOutputTemplate,
} from './naming.js';
export { assertWritableFolder, OutputFolderError } from './output-folder.js';
export { isPartFileOf, partFileTag } from './part-file.js';
export {
  assertNotProtected,
  ProtectedPathError,
  protectedPathHit,
} from './protected-paths.js';
export * from './report-data.js';
export {
  REPORT_FILE,
  ReportWriter,
  renderReport,
  reportFileOf,
  writeReport,
} from './report-html.js';
export { MAX_SEGMENT_BYTES, sanitizeSegment } from './sanitize.js';
