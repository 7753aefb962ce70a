/** `ibatch models [MODEL_ID]`: the model registry, or one model's input contract. */
import { ApiError } from '../../api/index.js';
import { type Model, normaliseOptions } from '../../contract/index.js';
import { UsageError } from '../../shared/index.js';
import type { CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { addCommonOptions, type CommonOptions, useColor } from '../options.js';
import { openService } from '../service.js';
import { cell, renderPairs, renderTable } from '../table.js';

export const modelsCommand: CommandModule = {
  register(program, io) {
    addCommonOptions(
      withExamples(program.command('models'), [
        ['models', 'every model: id, kind, vendor'],
        ['models flux-portrait', "one model's input contract"],
        ['models --emulator', "the built-in emulator's models"],
      ])
        .argument('[model-id]', 'show the input contract of this model')
        .description('list models or show one contract (never spends credits)'),
    ).action(async (modelId: string | undefined, options: CommonOptions) => {
      const color = useColor(io.stdout, io.env);
      const service = await openService(io, options);
      try {
        if (modelId === undefined) {
          const list = await service.client.listModels();
          if (options.json) {
            io.stdout.write(`${JSON.stringify(list)}\n`);
            return;
          }
          const rows = list.models.map((m) => [m.id, m.kind, m.vendor, m.label]);
          io.stdout.write(renderTable(['ID', 'KIND', 'VENDOR', 'LABEL'], rows, { color }));
          return;
        }
        const model = await getModelOrUsageError(
          service.client.getModel.bind(service.client),
          modelId,
        );
        if (options.json) {
          io.stdout.write(`${JSON.stringify({ model })}\n`);
          return;
        }
        io.stdout.write(describeModel(model, color));
      } finally {
        await service.close();
      }
    });
  },
};

async function getModelOrUsageError(
  getModel: (id: string) => Promise<Model>,
  modelId: string,
): Promise<Model> {
  try {
    return await getModel(modelId);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new UsageError(`unknown model \`${modelId}\`: run \`ibatch models\` to list them`, {
        cause: error,
      });
    }
    throw error;
  }
}

function describeModel(model: Model, color: boolean): string {
  const head = renderPairs([
    ['id', model.id],
    ['kind', model.kind],
    ['label', model.label],
    ['vendor', model.vendor],
    ['description', model.description],
    ...(model.inferenceTime ? [['typical time', model.inferenceTime] as const] : []),
    ...(model.capabilities ? [['capabilities', JSON.stringify(model.capabilities)] as const] : []),
  ]);
  const rows = model.fields.map((f) => [
    f.name,
    f.type,
    f.required ? 'yes' : 'no',
    cell(f.default),
    accepted(f),
  ]);
  return `${head}\n${renderTable(['FIELD', 'TYPE', 'REQUIRED', 'DEFAULT', 'ACCEPTED'], rows, { color })}`;
}

function accepted(field: Model['fields'][number]): string {
  const options = normaliseOptions(field.options);
  if (options.length > 0) return options.map((o) => cell(o.value)).join(', ');
  if (field.min !== undefined || field.max !== undefined)
    return `${cell(field.min)} to ${cell(field.max)}`;
  if (field.maxItems !== undefined) return `up to ${field.maxItems} items`;
  return '';
}
