/** `ibatch schema`: prints the JSON Schema of job files (for editors and CI). */
import { jobJsonSchema } from '../../job/index.js';
import type { CommandModule } from '../command.js';

export const schemaCommand: CommandModule = {
  register(program, io) {
    program
      .command('schema')
      .description('print the JSON Schema of job files (never spends credits)')
      .action(() => {
        io.stdout.write(`${JSON.stringify(jobJsonSchema(), null, 2)}\n`);
      });
  },
};
