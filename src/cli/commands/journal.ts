/**
 * `ibatch journal copy FROM TO`: moves a journal's history between stores
 * (a SQLite file and a PostgreSQL journal, either way). FROM is read in one
 * snapshot without a lock; TO is opened as a writer (created and migrated if
 * new) and written in one transaction. A job TO already holds is refused
 * (exit 2) before anything is written. See docs/journal.md.
 */
import { isJournalUrl, journalDisplayName, openJournal } from '../../journal/index.js';
import { redact } from '../../shared/index.js';
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';

const shown = (value: string) => (isJournalUrl(value) ? journalDisplayName(value) : value);

export const journalCommand: CommandModule = {
  register(program, io) {
    const examples: [string, string][] = [
      [
        'journal copy .ibatch/journal.db postgres://ibatch@db:5432/ibatch',
        'SQLite into PostgreSQL',
      ],
      ['journal copy postgres://ibatch@db:5432/ibatch team.db', 'and back into a file'],
    ];
    const journal = withExamples(program.command('journal'), examples).description(
      'journal maintenance: move history between SQLite and PostgreSQL',
    );
    withExamples(journal.command('copy'), examples)
      .description(
        'copy every run of one journal into another (refuses a job the target already holds)',
      )
      .argument('<from>', 'journal to copy: a file or postgres://USER@HOST:PORT/DB')
      .argument('<to>', 'journal to copy into: a file (created if missing) or a postgres:// URL')
      .action(async (from: string, to: string) => {
        const source = await openJournal(from, { readonly: true });
        try {
          const target = await openJournal(to);
          try {
            const copied = source.copyInto(target);
            const rows = Object.entries(copied)
              .map(([table, n]) => `${n} ${table}`)
              .join(', ');
            io.stdout.write(redact(`Copied ${shown(from)} into ${shown(to)}: ${rows}.\n`));
          } finally {
            target.close();
          }
        } finally {
          source.close();
        }
      });
  },
};
