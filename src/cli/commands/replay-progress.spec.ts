import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import type {
  ReplayGroup,
  ReplayPlan,
} from '../../dead-letters/replay/dead-letter-replay.service.js';
import { createReplayProgress } from './replay-progress.js';

class Capture extends Writable {
  text = '';
  constructor(readonly isTTY: boolean) {
    super();
  }
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

const letter = (id: string): ReplayGroup['letters'][number] => ({
  id,
  orderId: null,
  eventId: null,
  eventType: null,
  reason: 'in_doubt',
  error: 'x',
  attempts: 1,
  failedAt: new Date(0),
});
const groups: ReplayGroup[] = [
  { orderId: 'SO-1', letters: [letter('1'), letter('2')] },
  { orderId: null, letters: [letter('3')] },
];
const plan: ReplayPlan = { groups, orders: 1, keyless: 1, messages: 3, byReason: {} };

/** Replays the plan's two groups with progress on a stderr that is (or not) a terminal. */
function replayAll(isTTY: boolean): string {
  const stderr = new Capture(isTTY);
  const progress = createReplayProgress({ stdout: new Capture(false), stderr });
  progress.start(plan);
  progress.advance(groups[0]!, 2);
  progress.advance(groups[1]!, 1);
  progress.stop();
  return stderr.text;
}

describe('replay progress', () => {
  it('writes plain lines when stderr is not a terminal', () => {
    expect(replayAll(false)).toBe(
      'replaying 3 message(s): 1 order(s), 1 key-less\n' +
        'replayed order SO-1: 2 message(s) (2/3)\n' +
        'replayed key-less dead letter #3: 1 message(s) (3/3)\n',
    );
  });

  it('draws a bar on a terminal', () => {
    const text = replayAll(true);
    expect(text).toContain('replaying [');
    expect(text).toContain('3/3 messages | 2/2 orders');
  });
});
