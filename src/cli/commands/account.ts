/** `ibatch account`: balance and plan of the account the key belongs to. */
import type { CommandModule } from '../command.js';
import { addCommonOptions, type CommonOptions } from '../options.js';
import { openService } from '../service.js';
import { cell, renderPairs } from '../table.js';

export const accountCommand: CommandModule = {
  register(program, io) {
    addCommonOptions(
      program.command('account').description('show the balance and plan (never spends credits)'),
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
