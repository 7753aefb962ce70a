/** `npm run journal:schema`: rewrites the committed journal schema after a migration changes it. */
import { writeFileSync } from 'node:fs';
import { SQLITE_SCHEMA_FILE, sqliteSchemaText } from '../src/journal/schema-text.js';

writeFileSync(new URL(`../${SQLITE_SCHEMA_FILE}`, import.meta.url), sqliteSchemaText());
console.log(`wrote ${SQLITE_SCHEMA_FILE}`);
