/**
 * How many connections each client holds open on the public listener, and whether one more
 * may be accepted. A client is its IPv4 address, or the /64 of its IPv6 address (one
 * machine usually owns a whole /64, and could otherwise open the limit from each of its
 * addresses). Pure bookkeeping: the listener closes what this refuses.
 */
export class ConnectionLimiter {
  private readonly open = new Map<string, number>();

  constructor(private readonly maxPerClient: number) {}

  /** Counts one more connection from `address` and says true, or says false at the limit. */
  tryAdmit(address: string): boolean {
    const client = clientOf(address);
    const count = this.open.get(client) ?? 0;
    if (count >= this.maxPerClient) return false;
    this.open.set(client, count + 1);
    return true;
  }

  /** An admitted connection from `address` closed. */
  release(address: string): void {
    const client = clientOf(address);
    const count = this.open.get(client) ?? 0;
    if (count <= 1) this.open.delete(client);
    else this.open.set(client, count - 1);
  }

  /** Connections open from the client `address` belongs to. */
  openFrom(address: string): number {
    return this.open.get(clientOf(address)) ?? 0;
  }

  /** Clients holding at least one connection. */
  get clients(): number {
    return this.open.size;
  }
}

/**
 * The client an address belongs to: an IPv4 address as it is (also when a dual-stack
 * socket reports it as `::ffff:a.b.c.d`), an IPv6 address as its /64 (`2001:db8:0:1::/64`).
 * Anything else (not an IP address) stands for itself.
 */
export function clientOf(address: string): string {
  const bare = address.replace(/%.*$/, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!bare.includes(':')) return bare;
  const groups = ipv6Groups(bare);
  return groups === undefined ? bare : `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, without leading zeros; undefined if it is not one. */
function ipv6Groups(address: string): string[] | undefined {
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const [head = '', tail] = halves;
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups = [...left, ...Array<string>(Math.max(missing, 0)).fill('0'), ...right];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return groups.map((group) => group.replace(/^0+(?=.)/, ''));
}
