/**
 * @module job
 * Job files: parsing with positions, the strict schema (and its JSON Schema),
 * expansion into items with stable keys, and checks against model contracts.
 * See docs/job-files.md.
 */

export {
  abilitiesOf,
  isUrl,
  MEDIA_FIELD_TYPES,
  type ModelAbilities,
} from './contract-check.js';
export { CsvSyntaxError, detectDelimiter, formatCsv, parseCsv } from './csv.js';
export { parseDuration } from './duration.js';
export {
  type Expansion,
  expandJob,
  expansionOf,
  type JobScan,
  type StepCount,
  scanJob,
} from './expand.js';
export {
  type FormatOptions,
  formatIssues,
  isJobFileError,
  JobFileError,
  type JobIssue,
  sortIssues,
} from './issues.js';
export { DEFAULT_JOB_LIMITS, type JobLimits, jobLimits } from './limits.js';
export { type LoadOptions, loadJob, loadJobText } from './load.js';
export { defaultJournalPath, jobInputPaths } from './local-files.js';
export { UPLOAD_REF_PREFIX } from './media.js';
export {
  type CatalogOptions,
  catalogOf,
  DEFAULT_MODEL_CACHE_TTL_MS,
  defaultModelCachePath,
  type LoadedCatalog,
  loadModelCatalog,
  ModelCatalogError,
  type ModelLister,
} from './model-catalog.js';
export {
  mergeTargets,
  NOTIFY_FORMATS,
  type NotifyFormat,
  type NotifyTarget,
  notifyTarget,
  notifyUrlProblem,
  receiverName,
} from './notify-targets.js';
export { objectKey, parseS3Url, type S3Destination, s3UrlProblem } from './s3-url.js';
export {
  DEFAULT_FILENAME,
  type JobFile,
  JobFileSchema,
  jobJsonSchema,
  SlugSchema,
} from './schema.js';
export { jobIssueAt, type KeyPath } from './source-map.js';
export type {
  InfluencerRef,
  JobItem,
  LoadedInfluencer,
  LoadedJob,
  LoadedStep,
  MediaRef,
  ModelCatalog,
  TemplateValue,
  TemplateVars,
  UploadSet,
} from './types.js';
export {
  type CheckedJobFile,
  type CheckJobFileOptions,
  checkJobFile,
  type ValidatedJob,
  type ValidateOptions,
  validateJob,
} from './validate.js';
export { closest } from './zod-issues.js';
