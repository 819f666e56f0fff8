/**
 * OpenAPI 3.1 description of the sandbox's Payflow surface (the 18 endpoints and the
 * webhook), generated from the shared zod wire schemas with z.toJSONSchema, so the
 * document cannot drift from what the sandbox validates. Served at /sandbox/openapi.json.
 * The endpoint table is openapi.operations.ts; this file builds the document from it.
 */
import { z } from 'zod';
import {
  PAYFLOW_COMPONENT_SCHEMAS,
  type PayflowComponentName,
} from '../../payflow/wire/payflow.components.js';
import { PAYFLOW_SCOPES, settlementQuerySchema } from '../../payflow/wire/payflow.schemas.js';
import { OPERATIONS, P, type JsonObject, type Operation } from './openapi.operations.js';

const { create, update } = PAYFLOW_SCOPES;

function ref(name: PayflowComponentName): JsonObject {
  return { $ref: `#/components/schemas/${name}` };
}

function jsonContent(name: PayflowComponentName): JsonObject {
  return { 'application/json': { schema: ref(name) } };
}

/**
 * Every schema is described by its input side: for a request what the sandbox accepts,
 * for a response what a client must accept. The output side would mark a field with a
 * default as required (RefundResponse.debtorAccountNumber, optional in the spec).
 */
function toSchema(schema: z.ZodType): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  });
  return rest;
}

function errorResponses(operation: Operation): JsonObject {
  if (operation.scope === null) {
    return {
      '400': { description: 'RFC 6749 error', content: jsonContent('OAuthError') },
      '401': { description: 'Wrong client credentials', content: jsonContent('OAuthError') },
    };
  }
  const error = (description: string) => ({ description, content: jsonContent('Error') });
  return {
    '401': error('Missing, invalid or expired bearer token'),
    '403': error('Missing scope or organization not allowed'),
    ...(operation.notFound === undefined ? {} : { '404': error(operation.notFound) }),
    '422': {
      description: 'Validation or business-rule error',
      content: jsonContent('ValidationError'),
    },
    '429': error('Rate limited (Retry-After)'),
  };
}

function parameters(operation: Operation): JsonObject[] {
  const result: JsonObject[] = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (operation.organization) {
    result.push({
      name: 'X-Organization-Id',
      in: 'header',
      required: false,
      description: 'Required when the client belongs to several organizations.',
      schema: { type: 'string' },
    });
  }
  if (operation.response === 'csv') {
    const query = toSchema(settlementQuerySchema);
    const properties = (query.properties ?? {}) as Record<string, JsonObject>;
    const required = new Set((query.required ?? []) as string[]);
    for (const [name, schema] of Object.entries(properties)) {
      result.push({ name, in: 'query', required: required.has(name), schema });
    }
  }
  return result;
}

function operationObject(operation: Operation): JsonObject {
  const security =
    operation.scope === null
      ? [{ clientBasic: [] }]
      : [{ oauth2: operation.scope === undefined ? [] : [operation.scope] }];
  const requestBody = operation.body
    ? {
        required: true,
        content: {
          ...jsonContent(operation.body),
          ...(operation.multipart
            ? { 'multipart/form-data': { schema: operation.multipart } }
            : {}),
        },
      }
    : operation.form
      ? {
          required: true,
          content: { 'application/x-www-form-urlencoded': { schema: ref(operation.form) } },
        }
      : undefined;
  const ok =
    operation.response === 'csv'
      ? { description: 'RFC 4180 CSV', content: { 'text/csv': { schema: { type: 'string' } } } }
      : { description: 'OK', content: jsonContent(operation.response) };
  return {
    summary: operation.summary,
    tags: [operation.group === 'A' ? 'Payment management (A)' : 'Partner (B)'],
    security,
    parameters: parameters(operation),
    ...(requestBody ? { requestBody } : {}),
    responses: { '200': ok, ...errorResponses(operation) },
  };
}

export function buildOpenApiDocument(serverUrl: string): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const operation of OPERATIONS) {
    paths[operation.path] = {
      ...paths[operation.path],
      [operation.method]: operationObject(operation),
    };
  }
  const schemas = Object.fromEntries(
    Object.entries(PAYFLOW_COMPONENT_SCHEMAS).map(([name, schema]) => [name, toSchema(schema)]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Payflow sandbox (Payment Collection Service)',
      version: '1',
      description:
        'Group A (payment management) at the root, group B (partner) under /partner. ' +
        'Shapes where the Payflow spec says "not shown" follow docs/assumptions.md.',
    },
    servers: [{ url: serverUrl }],
    tags: [{ name: 'Payment management (A)' }, { name: 'Partner (B)' }],
    paths,
    webhooks: {
      paymentUpdate: {
        post: {
          summary: 'Payment Update (also status update and terminal failure)',
          parameters: [
            { name: 'X-Api-Key', in: 'header', required: false, schema: { type: 'string' } },
            {
              name: 'X-Payflow-Delivery',
              in: 'header',
              required: true,
              schema: { type: 'string' },
            },
          ],
          requestBody: { required: true, content: jsonContent('WebhookPayload') },
          responses: { '200': { description: 'Any 2xx counts as delivered' } },
        },
      },
    },
    components: {
      schemas,
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          flows: {
            clientCredentials: {
              tokenUrl: `${P}/auth/token`,
              scopes: {
                [create]: 'Create payments',
                [update]: 'Refund payments',
              },
            },
          },
        },
        clientBasic: { type: 'http', scheme: 'basic' },
      },
    },
  };
}
