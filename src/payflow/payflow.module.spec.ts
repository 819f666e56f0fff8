import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '../config/app-config.js';
import { PayflowClient } from './payflow.client.js';
import { PayflowAbortedError } from './payflow.errors.js';
import { PAYFLOW_API, PayflowModule, payflowClientOptionsFromConfig } from './payflow.module.js';
import type { PayflowApi } from './payflow.types.js';

const config = loadConfig({
  PAYFLOW_BASE_URL: 'http://127.0.0.1:9/',
  PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:9/partner',
  PAYFLOW_CLIENT_ID: 'id',
  PAYFLOW_CLIENT_SECRET: 'secret',
  PAYFLOW_REQUEST_TIMEOUT: '10s',
  PAYFLOW_MAX_CONNECTIONS: '64',
  WEBHOOK_PUBLIC_BASE_URL: 'https://bridge.example',
});

describe('payflowClientOptionsFromConfig', () => {
  it('maps the PAYFLOW_* configuration', () => {
    expect(payflowClientOptionsFromConfig(config)).toEqual({
      baseUrl: 'http://127.0.0.1:9',
      partnerBaseUrl: 'http://127.0.0.1:9/partner',
      tokenUrl: undefined,
      clientId: 'id',
      clientSecret: 'secret',
      connectTimeoutMs: 5000,
      requestTimeoutMs: 10_000,
      connections: 64,
      documentUpload: 'json',
    });
  });

  it('passes PAYFLOW_CLIENT_SECRET_FILE, so that the client can read a rotated secret again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'payflow-module-'));
    try {
      const file = join(dir, 'client-secret');
      writeFileSync(file, 'from-a-file\n');
      const fromFile = loadConfig({
        PAYFLOW_BASE_URL: 'http://127.0.0.1:9/',
        PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:9/partner',
        PAYFLOW_CLIENT_ID: 'id',
        PAYFLOW_CLIENT_SECRET_FILE: file,
        WEBHOOK_PUBLIC_BASE_URL: 'https://bridge.example',
      });
      expect(payflowClientOptionsFromConfig(fromFile)).toMatchObject({
        clientSecret: 'from-a-file',
        clientSecretFile: file,
      });
      expect(payflowClientOptionsFromConfig(config)).not.toHaveProperty('clientSecretFile');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('passes PAYFLOW_DOCUMENT_UPLOAD to the client', () => {
    const multipart = { ...config, PAYFLOW_DOCUMENT_UPLOAD: 'multipart' as const };
    expect(payflowClientOptionsFromConfig(multipart).documentUpload).toBe('multipart');
  });
});

@Injectable()
class NeedsPayflow {
  constructor(@Inject(PAYFLOW_API) readonly payflow: PayflowApi) {}
}

const CONFIG = Symbol('CONFIG');
@Module({ providers: [{ provide: CONFIG, useValue: config }], exports: [CONFIG] })
class ConfigModule {}

describe('PayflowModule', () => {
  it('forRoot provides PAYFLOW_API and closes the client on shutdown', async () => {
    @Module({ imports: [PayflowModule.forRoot(config)], providers: [NeedsPayflow] })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    const { payflow } = app.get(NeedsPayflow);
    expect(payflow).toBeInstanceOf(PayflowClient);
    expect(app.get(PayflowClient)).toBe(payflow);
    await app.close();
    await expect(payflow.ping()).rejects.toBeInstanceOf(PayflowAbortedError);
  });

  it('forRootAsync builds the client from injected configuration', async () => {
    @Module({
      imports: [
        PayflowModule.forRootAsync({
          imports: [ConfigModule],
          inject: [CONFIG],
          useFactory: (injected: typeof config) => ({
            options: payflowClientOptionsFromConfig(injected),
          }),
        }),
      ],
      providers: [NeedsPayflow],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    expect(app.get(NeedsPayflow).payflow).toBeInstanceOf(PayflowClient);
    await app.close();
  });
});
