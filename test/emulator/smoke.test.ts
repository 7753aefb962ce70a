import { describe, expect, it } from 'vitest';
import { AccountSchema, ModelListSchema } from '../../src/contract/index.js';
import { api, emulator } from './helpers.js';

describe('smoke', () => {
  it('serves account and models', async () => {
    const em = await emulator();
    const key = em.accounts[0]!.apiKey;
    const account = await api(em, key, 'GET', '/account');
    expect(account.status).toBe(200);
    expect(AccountSchema.parse(account.body).credits).toBe(25_000);
    const models = await api(em, key, 'GET', '/models');
    expect(ModelListSchema.parse(models.body).models.length).toBeGreaterThanOrEqual(8);
  });
});
