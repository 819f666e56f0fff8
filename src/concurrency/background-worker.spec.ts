import { describe, expect, it } from '@jest/globals';
import { BackgroundWorker } from './background-worker.js';

class RecordingWorker extends BackgroundWorker {
  readonly calls: string[] = [];
  private finishStop: () => void = () => undefined;

  constructor(private readonly startsWithApp: boolean) {
    super();
  }

  protected get autoStart(): boolean {
    return this.startsWithApp;
  }

  start(): void {
    this.calls.push('start');
  }

  stop(): Promise<void> {
    this.calls.push('stop');
    return new Promise((resolve) => {
      this.finishStop = resolve;
    });
  }

  endStop(): void {
    this.finishStop();
  }
}

describe('BackgroundWorker', () => {
  it('starts on application bootstrap when autoStart is on', () => {
    const worker = new RecordingWorker(true);
    worker.onApplicationBootstrap();
    expect(worker.calls).toEqual(['start']);
  });

  it('does not start on application bootstrap when autoStart is off', () => {
    const worker = new RecordingWorker(false);
    worker.onApplicationBootstrap();
    expect(worker.calls).toEqual([]);
  });

  it('stops before shutdown and waits until the stop has ended', async () => {
    const worker = new RecordingWorker(true);
    let shutDown = false;
    const shutdown = worker.beforeApplicationShutdown().then(() => {
      shutDown = true;
    });
    await Promise.resolve();
    expect(worker.calls).toEqual(['stop']);
    expect(shutDown).toBe(false);
    worker.endStop();
    await shutdown;
    expect(shutDown).toBe(true);
  });
});
