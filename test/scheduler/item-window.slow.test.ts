/**
 * A run starts its items lazily, a window over their order
 * (src/scheduler/item-window.ts). The window on its own (the bound, parked
 * items going in first, a retry taking a place again, the first error), then
 * a real run against the emulator: the items quoted and not yet created
 * (the journal shows both) never outnumber the bound, and do fill it.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import { connect } from '../../src/library/connect.js';
import { ItemWindow, itemWindowBound } from '../../src/scheduler/item-window.js';
import { defer, emulatorEnv, testEmulator } from '../helpers/index.js';
import { imageJob, workspace } from './helpers.js';

/** A deferred the test settles by hand. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('ItemWindow', () => {
  it('keeps at most `bound` items started and not past their create, and drives each once', async () => {
    const inside = new Set<number>();
    let most = 0;
    const driven: number[] = [];
    const creates = new Map<number, ReturnType<typeof gate<void>>>();
    const window = new ItemWindow<number>({
      bound: 3,
      blocker: () => undefined,
      drive: async (n, slot) => {
        driven.push(n);
        inside.add(n);
        most = Math.max(most, inside.size);
        const created = gate();
        creates.set(n, created);
        await created.promise;
        inside.delete(n);
        slot.leave();
      },
    });
    const done = window.run([0, 1, 2, 3, 4, 5, 6]);
    expect(driven).toEqual([0, 1, 2]);
    creates.get(1)?.open();
    await Promise.resolve();
    await Promise.resolve();
    expect(driven).toEqual([0, 1, 2, 3]);
    for (let n = 0; n < 7; n += 1) {
      creates.get(n)?.open();
      // Each answered create lets the next item in, in order.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await done;
    expect(driven).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(most).toBe(3);
    expect(window.peak).toBe(3);
  });

  it('takes no new item from the order while held, and goes on once woken', async () => {
    let held = false;
    const driven: number[] = [];
    const window = new ItemWindow<number>({
      bound: 2,
      blocker: () => undefined,
      held: () => held,
      drive: async (n) => {
        driven.push(n);
        // The first item's outputs fill what waits downstream.
        if (n === 0) held = true;
      },
    });
    const done = window.run([0, 1, 2, 3]);
    await new Promise((resolve) => setImmediate(resolve));
    // Room in the window, but held: nothing past the item that filled it.
    expect(driven).toEqual([0]);
    held = false;
    window.wake();
    await done;
    expect(driven).toEqual([0, 1, 2, 3]);
  });

  it('parks an item whose input is missing beside the window; it goes in first once the input settles', async () => {
    const source = gate<string>();
    const hold = gate();
    let sourceDone = false;
    const order: string[] = [];
    const window = new ItemWindow<string>({
      bound: 2,
      blocker: (name) => (name.startsWith('from') && !sourceDone ? source.promise : undefined),
      drive: async (name) => {
        order.push(name);
        await hold.promise;
      },
    });
    const done = window.run(['from-1', 'a', 'from-2', 'b', 'c', 'd']);
    // The parked items hold no places: the two ready ones are in.
    expect(order).toEqual(['a', 'b']);
    sourceDone = true;
    source.open('gen-1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['a', 'b']);
    hold.open();
    await done;
    // Released while the window was full, they went in before `c` and `d`.
    expect(order).toEqual(['a', 'b', 'from-1', 'from-2', 'c', 'd']);
    expect(window.peak).toBe(2);
  });

  it('takes no more of the order while `maxWaiting` items wait beside it (a training holds them all)', async () => {
    const training = gate();
    let trained = false;
    let taken = 0;
    function* entries() {
      for (let n = 0; n < 6; n++) {
        taken += 1;
        yield n;
      }
    }
    const order: number[] = [];
    const window = new ItemWindow<number>({
      bound: 1,
      maxWaiting: 2,
      blocker: () => (trained ? undefined : training.promise),
      drive: async (n) => {
        order.push(n);
      },
    });
    const done = window.run(entries());
    // Two wait for the training; the other four are not taken (not made whole).
    expect(taken).toBe(2);
    expect(order).toEqual([]);
    trained = true;
    training.open();
    await done;
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(taken).toBe(6);
  });

  it('a retry takes a place again, before items not started yet', async () => {
    const order: string[] = [];
    let retried = false;
    const window = new ItemWindow<string>({
      bound: 1,
      blocker: () => undefined,
      drive: async (name, slot) => {
        order.push(name);
        slot.leave();
        if (name === 'a' && !retried) {
          retried = true;
          await new Promise((resolve) => setImmediate(resolve));
          await slot.enter();
          order.push('a again');
        }
      },
    });
    await window.run(['a', 'b', 'c', 'd']);
    expect(order.indexOf('a again')).toBeGreaterThan(order.indexOf('b'));
    expect(order).toHaveLength(5);
    expect(window.peak).toBe(1);
  });

  it('ends with the first error of an item and starts no more', async () => {
    const order: number[] = [];
    const window = new ItemWindow<number>({
      bound: 1,
      blocker: () => undefined,
      drive: async (n) => {
        order.push(n);
        if (n === 1) throw new Error('journal disk full');
      },
    });
    await expect(window.run([0, 1, 2, 3])).rejects.toThrow('journal disk full');
    expect(order).toEqual([0, 1]);
  });

  it('ends with the error of an entry that cannot be read, also one read after a task ended', async () => {
    const order: number[] = [];
    function* entries() {
      yield 0;
      yield 1;
      throw new Error('the rows file cannot be read again');
    }
    const window = new ItemWindow<number>({
      bound: 1,
      blocker: () => undefined,
      drive: async (n) => {
        order.push(n);
      },
    });
    await expect(window.run(entries())).rejects.toThrow('the rows file cannot be read again');
    expect(order).toEqual([0, 1]);
  });
});

describe('a run starts its items lazily', () => {
  it('never has more items quoted and not yet created than the window holds, and fills it', async () => {
    const scale = 600;
    const em = await testEmulator({ timeScale: scale });
    const env = emulatorEnv(em);
    // Our generations bucket binds (5 per 100 ms, the service allows 20): the
    // create queue backs up, so a window that did not bound would show it.
    const limits = {
      ...Object.fromEntries(
        Object.entries(SERVICE_RATE_LIMITS).map(([bucket, w]) => [
          bucket,
          { count: w.count, windowMs: Math.round(w.windowMs / scale) },
        ]),
      ),
      generations: { count: 5, windowMs: 100 },
    } as typeof SERVICE_RATE_LIMITS;
    const connection = connect({
      baseUrl: env.IBATCH_BASE_URL ?? '',
      apiKey: env.IBATCH_API_KEY ?? '',
      limits,
    });
    defer(() => connection.close());
    const n = 120;
    const ws = workspace(imageJob({ name: 'lazy-items', n }));
    const bound = itemWindowBound(limits.generations.count, 4);
    expect(bound).toBeLessThan(n / 4);
    let reader: Database.Database | undefined;
    defer(() => reader?.close());
    const waiting: number[] = [];
    // Read at each item's end, in the run's own turn: what the journal shows
    // then is the window's state, not a sample taken at a guessed time.
    const onEvent = (event: { type: string }) => {
      if (event.type !== 'item-done') return;
      reader ??= new Database(ws.journalPath, { readonly: true, fileMustExist: true });
      const row = reader
        .prepare(
          `SELECT count(*) AS n FROM items i WHERE i.quoted_cost IS NOT NULL AND NOT EXISTS
             (SELECT 1 FROM attempts a WHERE a.item_row = i.rowid
                AND a.state <> 'intent')`,
        )
        .get() as { n: number };
      waiting.push(row.n);
    };
    const { result } = await connection.run(ws.jobPath, { onEvent });
    expect(result.exitCode, result.message).toBe(0);
    expect(result.counts.succeeded).toBe(n);
    expect(waiting).toHaveLength(n);
    expect(Math.max(...waiting)).toBeLessThanOrEqual(bound);
    // The limiter was never starved: at some item's end the window was full
    // but for the creates being sent.
    expect(Math.max(...waiting)).toBeGreaterThanOrEqual(bound - 4);
  });
});
