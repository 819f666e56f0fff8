/**
 * Kafka's murmur2 hash of a record key (org.apache.kafka.common.utils.Utils.murmur2), as the
 * Java client and kafkajs's default partitioner use it to choose a key's partition: the same
 * key lands on the same partition whoever produces it. 32-bit arithmetic with Math.imul.
 */
const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const R = 24;

export function murmur2(key: string | Buffer): number {
  const data = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k =
      (data[i] as number) |
      ((data[i + 1] as number) << 8) |
      ((data[i + 2] as number) << 16) |
      ((data[i + 3] as number) << 24);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const rest = length % 4;
  if (rest >= 3) h ^= (data[whole + 2] as number) << 16;
  if (rest >= 2) h ^= (data[whole + 1] as number) << 8;
  if (rest >= 1) {
    h ^= data[whole] as number;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}
