/**
 * The shape of a model in the emulator's registry (models.ts): the fields and
 * capabilities `GET /models` serves, and the emulator-internal pricing and
 * latency.
 */
import type { Kind } from '../contract/index.js';

export interface EmulatorField {
  name: string;
  /** text | number | boolean | enum | image | video | audio */
  type: string;
  label?: string;
  helpText?: string;
  required: boolean;
  default?: unknown;
  min?: number;
  max?: number;
  maxItems?: number;
  options?: Array<{ value: string | number; label: string }>;
  /** Text fields: the most characters accepted. */
  maxLength?: number;
  /** Numbers must be integers. */
  integer?: boolean;
  /** Values inside [min, max] that are still invalid (seed 0). */
  exclude?: number[];
}

export interface Pricing {
  /** per image copy, or per second of video */
  unit: 'image' | 'second' | 'clip';
  base: number;
  /** Input field holding the seconds (unit `second`). */
  durationField?: string;
  /** Multipliers by the value of one enum field (e.g. resolution). */
  multiplierField?: string;
  multipliers?: Record<string, number>;
}

export interface EmulatorModel {
  id: string;
  kind: Kind;
  label: string;
  vendor: string;
  description: string;
  inferenceTime: string;
  category: string;
  useCases: string[];
  capabilities: {
    influencer: boolean;
    imageToVideo: boolean;
    copies: boolean;
    maxCopies: number;
    needsOneOf?: string[][];
    [extra: string]: unknown;
  };
  fields: EmulatorField[];
  pricing: Pricing;
  latencyMs: readonly [number, number];
}
