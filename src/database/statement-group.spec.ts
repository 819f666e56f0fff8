import { StatementGroup } from './statement-group.js';

interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A statement runner whose calls the test answers one by one. */
function controlled(): {
  readonly calls: { readonly items: readonly number[]; readonly answer: Deferred<string[]> }[];
  readonly run: (items: readonly number[]) => Promise<string[]>;
} {
  const calls: { items: readonly number[]; answer: Deferred<string[]> }[] = [];
  return {
    calls,
    run: (items) => {
      const answer = deferred<string[]>();
      calls.push({ items, answer });
      return answer.promise;
    },
  };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('StatementGroup', () => {
  it('carries the items added in one turn in one statement, each caller getting its own result', async () => {
    const runner = controlled();
    const group = new StatementGroup<number, string>({ run: runner.run });
    const results = [group.add(1), group.add(2), group.add(3)];
    await flush();
    expect(runner.calls.map((call) => call.items)).toEqual([[1, 2, 3]]);
    runner.calls[0]?.answer.resolve(['a', 'b', 'c']);
    await expect(Promise.all(results)).resolves.toEqual(['a', 'b', 'c']);
    expect(group.stats()).toEqual({ statements: 1, items: 3 });
  });

  it('runs one statement at a time and sends what arrived meanwhile as soon as it returns', async () => {
    const runner = controlled();
    const group = new StatementGroup<number, string>({ run: runner.run });
    const first = group.add(1);
    await flush();
    const second = group.add(2);
    const third = group.add(3);
    await flush();
    expect(runner.calls).toHaveLength(1);
    runner.calls[0]?.answer.resolve(['one']);
    await expect(first).resolves.toBe('one');
    await flush();
    expect(runner.calls.map((call) => call.items)).toEqual([[1], [2, 3]]);
    runner.calls[1]?.answer.resolve(['two', 'three']);
    await expect(Promise.all([second, third])).resolves.toEqual(['two', 'three']);
  });

  it('rejects only the callers of a failed statement; the next group still runs', async () => {
    const runner = controlled();
    const group = new StatementGroup<number, string>({ run: runner.run });
    const failing = [group.add(1), group.add(2)];
    await flush();
    const later = group.add(3);
    const failure = new Error('connection lost');
    runner.calls[0]?.answer.reject(failure);
    for (const result of failing) await expect(result).rejects.toBe(failure);
    await flush();
    runner.calls[1]?.answer.resolve(['three']);
    await expect(later).resolves.toBe('three');
  });

  it('splits a crowd into statements of at most maxItems', async () => {
    const runner = controlled();
    const group = new StatementGroup<number, string>({ run: runner.run, maxItems: 2 });
    const results = [1, 2, 3, 4, 5].map((item) => group.add(item));
    for (let round = 0; round < 3; round += 1) {
      await flush();
      const call = runner.calls[round];
      call?.answer.resolve(call.items.map(String));
    }
    await expect(Promise.all(results)).resolves.toEqual(['1', '2', '3', '4', '5']);
    expect(runner.calls.map((call) => call.items)).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('rejects every caller when the statement answers for a different number of items', async () => {
    const runner = controlled();
    const group = new StatementGroup<number, string>({ run: runner.run });
    const results = [group.add(1), group.add(2)];
    await flush();
    runner.calls[0]?.answer.resolve(['only one']);
    for (const result of results) {
      await expect(result).rejects.toThrow('returned 1 results for 2 items');
    }
  });
});
