/**
 * Group commit for one autocommit statement: callers `add` an item and get its result once
 * the statement that carried it committed. One statement runs at a time; the items added
 * while it runs go together in the next one, as soon as it returns. An idle group runs a
 * lone item at once (after the current microtasks, so that items added in the same turn of
 * the event loop share the statement).
 *
 * Unlike TransactionBatcher's units, every caller of a group is released by the same
 * answer, in the same turn of the event loop: meant for marks that must be durable just
 * before something happens (the send mark of a Payflow request), where one commit per
 * caller made them wait for a pooled connection and a COMMIT of their own.
 */
export interface StatementGroupOptions<I, R> {
  /** Runs the statement for `items`; returns one result per item, in order. */
  readonly run: (items: readonly I[]) => Promise<readonly R[]>;
  /** Most items in one statement. Default 256. */
  readonly maxItems?: number;
}

interface Waiting<I, R> {
  readonly item: I;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

export class StatementGroup<I, R> {
  private readonly run: (items: readonly I[]) => Promise<readonly R[]>;
  private readonly maxItems: number;
  private waiting: Waiting<I, R>[] = [];
  private running = false;
  private scheduled = false;
  private statements = 0;
  private items = 0;

  constructor(options: StatementGroupOptions<I, R>) {
    this.run = options.run;
    this.maxItems = Math.max(1, options.maxItems ?? 256);
  }

  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Statements run and items carried so far (for the bench and the metrics). */
  stats(): { readonly statements: number; readonly items: number } {
    return { statements: this.statements, items: this.items };
  }

  private schedule(): void {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      void this.next();
    });
  }

  private async next(): Promise<void> {
    if (this.running || this.waiting.length === 0) return;
    this.running = true;
    const group = this.waiting.splice(0, this.maxItems);
    this.statements += 1;
    this.items += group.length;
    try {
      const results = await this.run(group.map((waiting) => waiting.item));
      if (results.length !== group.length) {
        throw new Error(
          `a grouped statement returned ${results.length} results for ${group.length} items`,
        );
      }
      group.forEach((waiting, index) => waiting.resolve(results[index] as R));
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
    } finally {
      this.running = false;
      if (this.waiting.length > 0) this.schedule();
    }
  }
}
