/** DATABASE_*, DB_*: reaching Postgres (docs/security.md for TLS). */
import { z } from 'zod';
import { boolean, filePath, positiveInt } from '../env-values.js';

export const databaseEnv = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// URL' })
    .default('postgres://postgres@127.0.0.1:5432/payflow_bridge'),
  /** PEM CA that signs Postgres's certificate (sslmode verify-ca / verify-full). */
  DATABASE_SSL_CA_FILE: filePath.optional(),
  /** Overrides the password of DATABASE_URL, so that the URL itself holds no secret. */
  DATABASE_PASSWORD: z.string().min(1).optional(),
  DB_MIGRATE: boolean.default(true),
  DB_POOL_SIZE: positiveInt.default(20),
});

export type DatabaseConfig = z.output<typeof databaseEnv>;
