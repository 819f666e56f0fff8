/**
 * Bytes from the operating system's CSPRNG, drawn a block at a time: one system call per
 * block instead of one per draw (as Node's own randomUUID does with its cache). A draw is
 * copied out and its bytes in the block are zeroed, so that the pool keeps no secret it
 * handed out; what it holds is only bytes not drawn yet.
 */
import { randomBytes, randomFillSync } from 'node:crypto';

export class RandomPool {
  private readonly block: Buffer;
  /** Where the bytes not drawn yet begin; the block's length when it is used up. */
  private offset: number;

  constructor(blockBytes = 8192) {
    this.block = Buffer.alloc(blockBytes);
    this.offset = blockBytes;
  }

  /** `bytes` fresh random bytes (a draw larger than the block goes to the CSPRNG itself). */
  take(bytes: number): Buffer {
    if (bytes > this.block.length) return randomBytes(bytes);
    if (this.offset + bytes > this.block.length) {
      randomFillSync(this.block);
      this.offset = 0;
    }
    const end = this.offset + bytes;
    const drawn = Buffer.from(this.block.subarray(this.offset, end));
    this.block.fill(0, this.offset, end);
    this.offset = end;
    return drawn;
  }
}
