/** `ibatch influencers`: the account's trained characters and whether each is ready. */
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { addCommonOptions, type CommonOptions, useColor } from '../options.js';
import { openService } from '../service.js';
import { cell, renderTable } from '../table.js';

export const influencersCommand: CommandModule = {
  register(program, io) {
    addCommonOptions(
      withExamples(program.command('influencers'), [
        ['influencers', "the account's influencers and whether each is ready"],
        ['influencers --json', 'the same as one JSON document'],
      ]).description("list the account's influencers and whether each is ready"),
    ).action(async (options: CommonOptions) => {
      const service = await openService(io, options);
      try {
        const list = await service.client.listInfluencers();
        if (options.json) {
          io.stdout.write(`${JSON.stringify(list)}\n`);
          return;
        }
        io.stdout.write(`${list.total} influencers, ${list.ready} ready\n`);
        if (list.characters.length === 0) return;
        const rows = list.characters.map((c) => [
          c.id,
          c.name,
          c.username,
          cell(c.ready),
          c.status,
        ]);
        io.stdout.write(
          renderTable(['ID', 'NAME', 'USERNAME', 'READY', 'STATUS'], rows, {
            color: useColor(io.stdout, io.env),
          }),
        );
      } finally {
        await service.close();
      }
    });
  },
};
