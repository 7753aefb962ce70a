/**
 * undici (HTTP client), required on first use rather than imported: loading
 * it is a noticeable part of start-up, which the commands that never connect
 * (`status`, `report`, `costs`, `validate --offline`...) need not pay.
 * The same module instance an `import 'undici'` gives.
 */
import { createRequire } from 'node:module';

type Undici = typeof import('undici');

let loaded: Undici | undefined;

export function undici(): Undici {
  loaded ??= createRequire(import.meta.url)('undici') as Undici;
  return loaded;
}
