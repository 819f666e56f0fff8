import { describe, expect, it } from '@jest/globals';
import { BoundedStore, FINISHED_LOOKAHEAD, PAGE_SCAN_BUDGET } from './bounded-store.js';

interface Item {
  id: string;
  number: number;
  finished: boolean;
  group: string;
}

const item = (number: number, finished = false, group = 'a'): Item => ({
  id: `i${number}`,
  number,
  finished,
  group,
});

function store(max: number): { store: BoundedStore<Item>; forgotten: number[] } {
  const forgotten: number[] = [];
  const kept = new BoundedStore<Item>(max, (entry) => entry.finished);
  kept.onForget((entry) => forgotten.push(entry.number));
  return { store: kept, forgotten };
}

/** Every kept item, following the cursors. */
function all(kept: BoundedStore<Item>, limit: number, filter?: (entry: Item) => boolean): Item[] {
  const items: Item[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = kept.page(cursor, limit, filter);
    items.push(...page.items);
    if (page.nextCursor === null) return items;
    cursor = page.nextCursor;
  }
}

describe('BoundedStore', () => {
  it('keeps at most its bound, forgetting the oldest finished record first, else the oldest', () => {
    const { store: kept, forgotten } = store(3);
    kept.add(item(1));
    kept.add(item(2, true));
    kept.add(item(3));
    kept.add(item(4)); // 2 is the oldest finished one
    expect(forgotten).toEqual([2]);
    kept.add(item(5)); // none finished: the oldest goes
    expect(forgotten).toEqual([2, 1]);
    expect(kept.size).toBe(3);
    expect(kept.get('i1')).toBeUndefined();
    expect(kept.get('i3')?.number).toBe(3);
    expect(all(kept, 10).map((entry) => entry.number)).toEqual([3, 4, 5]);
  });

  it('looks for a finished record only among the oldest FINISHED_LOOKAHEAD', () => {
    const { store: kept, forgotten } = store(FINISHED_LOOKAHEAD + 1);
    for (let n = 1; n <= FINISHED_LOOKAHEAD; n++) kept.add(item(n));
    kept.add(item(FINISHED_LOOKAHEAD + 1, true));
    kept.add(item(FINISHED_LOOKAHEAD + 2));
    expect(forgotten).toEqual([1]);
  });

  it('pages in creation order with a cursor, and stays bounded over many records', () => {
    const { store: kept } = store(5_000);
    for (let n = 1; n <= 50_000; n++) kept.add(item(n, n % 3 === 0, n % 2 === 0 ? 'a' : 'b'));
    expect(kept.size).toBe(5_000);
    expect(kept.indexEntries).toBeLessThanOrEqual(2 * 5_000 + 1);
    const listed = all(kept, 700);
    expect(listed).toHaveLength(5_000);
    expect(listed.map((entry) => entry.number)).toEqual(
      [...listed.map((entry) => entry.number)].sort((x, y) => x - y),
    );
    expect(new Set(listed.map((entry) => entry.id)).size).toBe(5_000);
    const first = kept.page(undefined, 10);
    expect(first.items).toHaveLength(10);
    expect(first.nextCursor).toBe(String(first.items[9]?.number));
    const onlyB = all(kept, 100, (entry) => entry.group === 'b');
    expect(onlyB.length).toBeGreaterThan(0);
    expect(onlyB.every((entry) => entry.group === 'b')).toBe(true);
  });

  it('stays fast and bounded when most records never finish', () => {
    const { store: kept } = store(2_000);
    const started = performance.now();
    for (let n = 1; n <= 40_000; n++) kept.add(item(n, n % 4 === 0));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(kept.size).toBe(2_000);
    expect(kept.indexEntries).toBeLessThanOrEqual(2 * 2_000 + 1);
  });

  it('ends a page at its scan budget, with a cursor to go on from', () => {
    const { store: kept } = store(PAGE_SCAN_BUDGET * 2);
    for (let n = 1; n <= PAGE_SCAN_BUDGET + 10; n++)
      kept.add(item(n, false, n > PAGE_SCAN_BUDGET ? 'late' : 'a'));
    const first = kept.page(undefined, 5, (entry) => entry.group === 'late');
    expect(first.items).toEqual([]);
    expect(first.nextCursor).toBe(String(PAGE_SCAN_BUDGET));
    const second = kept.page(first.nextCursor ?? undefined, 5, (entry) => entry.group === 'late');
    expect(second.items.map((entry) => entry.number)).toEqual([
      PAGE_SCAN_BUDGET + 1,
      PAGE_SCAN_BUDGET + 2,
      PAGE_SCAN_BUDGET + 3,
      PAGE_SCAN_BUDGET + 4,
      PAGE_SCAN_BUDGET + 5,
    ]);
    expect(kept.page(second.nextCursor ?? undefined, 5).nextCursor).toBeNull();
  });
});
