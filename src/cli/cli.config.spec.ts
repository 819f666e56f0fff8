import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('takes secrets from files and checks the Kafka security variables like the worker', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pfb-cli-')), 'db');
    writeFileSync(file, 'pw\n');
    expect(loadCliConfig({ DATABASE_PASSWORD_FILE: file }).DATABASE_PASSWORD).toBe('pw');
    expect(() => loadCliConfig({ DATABASE_PASSWORD: 'a', DATABASE_PASSWORD_FILE: file })).toThrow(
      'Invalid configuration: DATABASE_PASSWORD and DATABASE_PASSWORD_FILE are both set',
    );
    expect(() =>
      loadCliConfig({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'operator' }),
    ).toThrow(
      'Invalid configuration: KAFKA_SASL_PASSWORD is required with KAFKA_SASL_MECHANISM=scram-sha-512',
    );
    expect(() => loadCliConfig({ KAFKA_SSL_CA_FILE: '/ca.pem' })).toThrow(
      'Invalid configuration: KAFKA_SSL_CA_FILE is set but KAFKA_SSL is not true',
    );
  });
});
