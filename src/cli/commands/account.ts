/** `ibatch account`: balance and plan of the account the key belongs to. */
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { addCommonOptions, type CommonOptions } from '../options.js';
import { openService } from '../service.js';
import { cell, renderPairs } from '../table.js';

export const accountCommand: CommandModule = {
  register(program, io) {
    addCommonOptions(
      withExamples(program.command('account'), [
        ['account', 'credits, plan and where to top up'],
        ['account --json', 'the same as one JSON document'],
      ]).description('show the balance and plan (never spends credits)'),
    ).action(async (options: CommonOptions) => {
      const service = await openService(io, options);
      try {
        const account = await service.client.getAccount();
        if (options.json) {
          io.stdout.write(`${JSON.stringify(account)}\n`);
          return;
        }
        io.stdout.write(
          renderPairs([
            ['credits', cell(account.credits)],
            ['plan', account.plan],
            ['subscribed', cell(account.subscribed)],
            ['name', cell(account.name)],
            ['email', cell(account.email)],
            ['top up', account.purchaseUrl],
          ]),
        );
      } finally {
        await service.close();
      }
    });
  },
};
