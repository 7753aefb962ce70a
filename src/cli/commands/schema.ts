/** `ibatch schema`: prints the JSON Schema of job files (for editors and CI). */
import { jobJsonSchema } from '../../job/index.js';
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';

export const schemaCommand: CommandModule = {
  register(program, io) {
    withExamples(program.command('schema'), [
      ['schema > job.schema.json', 'for an editor: completion and checks in YAML files'],
    ])
      .description('print the JSON Schema of job files (never spends credits)')
      .action(() => {
        io.stdout.write(`${JSON.stringify(jobJsonSchema(), null, 2)}\n`);
      });
  },
};
