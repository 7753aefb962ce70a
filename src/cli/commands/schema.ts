/** `ibatch schema`: prints the JSON Schema of job files (for editors and CI), or of provenance sidecars. */
import { jobJsonSchema } from '../../job/index.js';
import { provenanceJsonSchema } from '../../provenance/index.js';
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';

export const schemaCommand: CommandModule = {
  register(program, io) {
    withExamples(program.command('schema'), [
      ['schema > job.schema.json', 'for an editor: completion and checks in YAML files'],
      ['schema --provenance', 'the JSON Schema of the provenance sidecars (<file>.json)'],
    ])
      .description('print the JSON Schema of job files (never spends credits)')
      .option('--provenance', "print the schema of outputs' provenance sidecars instead")
      .action((flags: { provenance?: boolean }) => {
        const schema = flags.provenance ? provenanceJsonSchema() : jobJsonSchema();
        io.stdout.write(`${JSON.stringify(schema, null, 2)}\n`);
      });
  },
};
