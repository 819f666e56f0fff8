import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../config/app-config.js';
import { loadCliConfig } from './cli.config.js';

describe('loadCliConfig', () => {
  it('needs no Payflow or webhook variables, and logs warnings only by default', () => {
    const config = loadCliConfig({});
    expect(config.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/payflow_bridge');
    expect(config.KAFKA_BROKERS).toEqual(['127.0.0.1:9092']);
    expect(config.TOPIC_ORDERS).toBe('erp.orders.v1');
    expect(config.LOG_LEVEL).toBe('warn');
    expect(Object.keys(config)).not.toContain('PAYFLOW_CLIENT_SECRET');
  });

  it('validates what it reads like the worker, in one line that names the variable', () => {
    expect(loadCliConfig({ KAFKA_BROKERS: 'a:1, b:2', LOG_LEVEL: 'debug' })).toMatchObject({
      KAFKA_BROKERS: ['a:1', 'b:2'],
      LOG_LEVEL: 'debug',
    });
    expect(() => loadCliConfig({ DATABASE_URL: 'mysql://x' })).toThrow(ConfigError);
    expect(() => loadCliConfig({ DATABASE_URL: 'mysql://x' })).toThrow(
      'Invalid configuration: DATABASE_URL must be a postgres:// URL',
    );
    expect(() => loadCliConfig({ KAFKA_BROKERS: 'nope' })).toThrow(/KAFKA_BROKERS/);
  });
});
