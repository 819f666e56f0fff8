import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { murmur2 } from './murmur2.js';
import { partitionOfKey } from './kafka.producer.js';

describe('murmur2 (Kafka key -> partition)', () => {
  it("matches Apache Kafka's own test vectors (UtilsTest.testMurmur2)", () => {
    expect(murmur2('21')).toBe(-973932308);
    expect(murmur2('foobar')).toBe(-790332482);
    expect(murmur2('a-little-bit-long-string')).toBe(-985981536);
    expect(murmur2('a-little-bit-longer-string')).toBe(-1486304829);
    expect(murmur2('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8')).toBe(-58897971);
    expect(murmur2('abc')).toBe(479470107);
  });

  it("chooses the partition kafkajs's default partitioner chooses, for any key and count", () => {
    const partitioner = Partitioners.DefaultPartitioner();
    for (let i = 0; i < 2_000; i++) {
      const key = i % 2 === 0 ? `SO-${i}-${randomBytes(4).toString('hex')}` : randomBytes(i % 40);
      const partitions = 1 + (i % 48);
      const partitionMetadata: PartitionMetadata[] = Array.from(
        { length: partitions },
        (_, id) => ({
          partitionId: id,
          leader: 0,
          partitionErrorCode: 0,
          replicas: [0],
          isr: [0],
        }),
      );
      const expected = partitioner({ topic: 't', partitionMetadata, message: { key, value: 'v' } });
      expect(partitionOfKey(key, partitions)).toBe(expected);
    }
  });
});
