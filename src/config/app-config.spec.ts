import { describe, expect, it } from '@jest/globals';
import { loadConfig } from './app-config.js';

const required = {
  PAYFLOW_BASE_URL: 'http://127.0.0.1:4010',
  PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:4010/partner',
  PAYFLOW_CLIENT_ID: 'sandbox-client',
  PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
  WEBHOOK_PUBLIC_BASE_URL: 'https://bridge.example.com/',
};

describe('loadConfig', () => {
  it('applies the contract defaults', () => {
    const config = loadConfig(required);
    expect(config.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/payflow_bridge');
    expect(config.KAFKA_BROKERS).toEqual(['127.0.0.1:9092']);
    expect(config.KAFKA_GROUP_ID).toBe('payflow-bridge');
    expect(config.TOPIC_ORDERS).toBe('erp.orders.v1');
    expect(config.TOPIC_PAYMENT_STATUS).toBe('payflow.payment-status.v1');
    expect(config.TOPIC_SETTLEMENTS).toBe('payflow.settlements.v1');
    expect(config.HTTP_PORT).toBe(3000);
    expect(config.SETTLEMENT_CRON).toBe('0 30 2 * * *');
    expect(config.SETTLEMENT_TIMEZONE).toBe('Europe/Oslo');
    expect(config.DB_MIGRATE).toBe(true);
    expect(config.MAX_IN_FLIGHT).toBe(256);
    expect(config.ORDER_SEQUENCING).toBe('key');
    expect(config.KAFKA_FETCH_MAX_WAIT).toBe(1_000);
    expect(config.KAFKA_SESSION_TIMEOUT).toBe(10_000);
    expect(config.KAFKA_PRODUCER_IDEMPOTENT).toBe(true);
    expect(config.WEBHOOK_PUBLIC_BASE_URL).toBe('https://bridge.example.com');
  });

  it('turns the idempotent producer off only when told to', () => {
    expect(
      loadConfig({ ...required, KAFKA_PRODUCER_IDEMPOTENT: 'false' }).KAFKA_PRODUCER_IDEMPOTENT,
    ).toBe(false);
    expect(() => loadConfig({ ...required, KAFKA_PRODUCER_IDEMPOTENT: 'maybe' })).toThrow(
      /KAFKA_PRODUCER_IDEMPOTENT/,
    );
  });

  it('bounds the bytes in flight: 32 MiB by default, sizes with binary units', () => {
    expect(loadConfig(required).MAX_IN_FLIGHT_BYTES).toBe(32 * 1024 * 1024);
    expect(loadConfig({ ...required, MAX_IN_FLIGHT_BYTES: '8MiB' }).MAX_IN_FLIGHT_BYTES).toBe(
      8 * 1024 * 1024,
    );
    expect(loadConfig({ ...required, MAX_IN_FLIGHT_BYTES: '512KiB' }).MAX_IN_FLIGHT_BYTES).toBe(
      512 * 1024,
    );
    expect(loadConfig({ ...required, MAX_IN_FLIGHT_BYTES: '1000000' }).MAX_IN_FLIGHT_BYTES).toBe(
      1_000_000,
    );
    for (const bad of ['0', '-1', '32MB', 'lots', '1.5MiB']) {
      expect(() => loadConfig({ ...required, MAX_IN_FLIGHT_BYTES: bad })).toThrow(
        'Invalid configuration: MAX_IN_FLIGHT_BYTES must be a positive size in bytes, or with KiB, MiB or GiB (e.g. 32MiB)',
      );
    }
  });

  it('opens as many Payflow connections as events may be in flight, unless told otherwise', () => {
    expect(loadConfig(required).PAYFLOW_MAX_CONNECTIONS).toBe(256);
    expect(loadConfig({ ...required, MAX_IN_FLIGHT: '40' }).PAYFLOW_MAX_CONNECTIONS).toBe(40);
    expect(
      loadConfig({ ...required, MAX_IN_FLIGHT: '40', PAYFLOW_MAX_CONNECTIONS: '10' })
        .PAYFLOW_MAX_CONNECTIONS,
    ).toBe(10);
    expect(() => loadConfig({ ...required, PAYFLOW_MAX_CONNECTIONS: '0' })).toThrow(
      'PAYFLOW_MAX_CONNECTIONS',
    );
  });

  it('exports spans only when OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
    expect(loadConfig(required).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(
      loadConfig({ ...required, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })
        .OTEL_EXPORTER_OTLP_ENDPOINT,
    ).toBe('http://collector:4318');
    expect(() => loadConfig({ ...required, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector' })).toThrow(
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    );
  });

  it('sends documents as JSON unless PAYFLOW_DOCUMENT_UPLOAD says multipart', () => {
    expect(loadConfig(required).PAYFLOW_DOCUMENT_UPLOAD).toBe('json');
    expect(
      loadConfig({ ...required, PAYFLOW_DOCUMENT_UPLOAD: 'multipart' }).PAYFLOW_DOCUMENT_UPLOAD,
    ).toBe('multipart');
    expect(() => loadConfig({ ...required, PAYFLOW_DOCUMENT_UPLOAD: 'form' })).toThrow(
      'Invalid configuration: PAYFLOW_DOCUMENT_UPLOAD must be json or multipart',
    );
  });

  it('names the missing variable in one line', () => {
    const { PAYFLOW_CLIENT_ID: _omitted, ...rest } = required;
    expect(() => loadConfig(rest)).toThrow('Invalid configuration: PAYFLOW_CLIENT_ID is required');
  });

  it('refuses a plain-http webhook base URL', () => {
    expect(() =>
      loadConfig({ ...required, WEBHOOK_PUBLIC_BASE_URL: 'http://bridge.example.com' }),
    ).toThrow(/WEBHOOK_PUBLIC_BASE_URL must be an https:\/\/ URL/);
  });

  it('parses lists, durations and booleans, and refuses bad ones', () => {
    const config = loadConfig({
      ...required,
      KAFKA_BROKERS: 'a:9092, b:9093',
      RETRY_MAX_DURATION: '5m',
      DB_MIGRATE: 'false',
    });
    expect(config.KAFKA_BROKERS).toEqual(['a:9092', 'b:9093']);
    expect(config.RETRY_MAX_DURATION).toBe(300_000);
    expect(config.DB_MIGRATE).toBe(false);
    expect(() => loadConfig({ ...required, KAFKA_BROKERS: 'nohost' })).toThrow(/KAFKA_BROKERS/);
    expect(() => loadConfig({ ...required, HTTP_PORT: 'eighty' })).toThrow(/HTTP_PORT/);
    expect(loadConfig({ ...required, ORDER_SEQUENCING: 'partition' }).ORDER_SEQUENCING).toBe(
      'partition',
    );
    expect(() => loadConfig({ ...required, ORDER_SEQUENCING: 'order' })).toThrow(
      'Invalid configuration: ORDER_SEQUENCING must be key or partition',
    );
    expect(() => loadConfig({ ...required, RETRY_MAX_DURATION: 'soon' })).toThrow(
      /RETRY_MAX_DURATION/,
    );
  });

  it('refuses a settlement schedule that cron or the time-zone database does not know', () => {
    expect(loadConfig({ ...required, SETTLEMENT_CRON: '*/5 * * * * *' }).SETTLEMENT_CRON).toBe(
      '*/5 * * * * *',
    );
    expect(() => loadConfig({ ...required, SETTLEMENT_CRON: '0 61 2 * * *' })).toThrow(
      /SETTLEMENT_CRON must be a cron expression/,
    );
    expect(() => loadConfig({ ...required, SETTLEMENT_TIMEZONE: 'Europe/Olso' })).toThrow(
      'Invalid configuration: SETTLEMENT_TIMEZONE must be an IANA time zone such as Europe/Oslo',
    );
    expect(loadConfig({ ...required, SETTLEMENT_ENABLED: 'false' }).SETTLEMENT_ENABLED).toBe(false);
  });

  it('never echoes a secret value', () => {
    const secret = 'super-secret-value';
    try {
      loadConfig({ ...required, PAYFLOW_CLIENT_SECRET: secret, DATABASE_URL: `mysql://${secret}` });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(String(error)).toMatch(/DATABASE_URL/);
      expect(String(error)).not.toContain(secret);
    }
  });

  it('wants TLS files in pairs', () => {
    expect(() => loadConfig({ ...required, TLS_CERT_FILE: '/tmp/cert.pem' })).toThrow(
      /TLS_KEY_FILE/,
    );
  });
});
