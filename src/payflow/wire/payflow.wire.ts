/**
 * The pieces an endpoint of the table (payflow.endpoints.ts) is made of: how its input
 * becomes a request (a JSON or form body, a query, a document upload), each validated with
 * the shared zod schema before anything is sent, and how its 2xx answer is read (JSON parsed
 * with the response schema, then mapped; or a CSV stream).
 *
 * An encoder that cannot build its request throws a plain Error saying why, without values;
 * the client turns it into PAYFLOW.INVALID_REQUEST (nothing sent). A decoder's failure is
 * PAYFLOW.BAD_RESPONSE.
 */
import { PassThrough, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { AttemptContext, Consume } from '../http/payflow.call.js';
import { describeZodError, errorForTransport } from '../http/payflow.error-mapping.js';
import { PayflowBadResponseError, PayflowError } from '../payflow.errors.js';
import { parseJsonOrUndefined } from '../http/payflow.exchange.js';
import { decodeDocumentContent, uploadDocumentMultipart } from './payflow.multipart.js';
import type { uploadDocumentSchema } from './payflow.schemas.js';
import type { PayflowDocumentUpload, SettlementCsv } from '../payflow.types.js';

/** What an endpoint's input becomes on the wire, besides its path. */
export interface WireRequest {
  readonly query?: string;
  readonly body?: string | Buffer;
  readonly contentType?: string;
}

/** Client settings an encoder may depend on. */
export interface EncodeContext {
  readonly documentUpload: PayflowDocumentUpload;
}

export type Encoder<In, O> = (
  input: In,
  options: O,
  context: EncodeContext,
) => WireRequest | Promise<WireRequest>;

/** How a 2xx answer is read, given the call's input and options. */
export type Decoder<In, O, Out> = (input: In, options: O) => Consume<Out>;

/** Builds a request value and validates it; throws why it is invalid (paths and messages only). */
export function checked<S extends z.ZodType>(schema: S, build: () => unknown): z.output<S> {
  let wire: unknown;
  try {
    wire = build();
  } catch (error) {
    throw new Error(error instanceof Error ? error.message : 'cannot build the body', {
      cause: error,
    });
  }
  const parsed = schema.safeParse(wire);
  if (!parsed.success) throw new Error(describeZodError(parsed.error));
  return parsed.data;
}

/** A JSON body built by `build` and checked against `schema`. */
export function jsonBody<S extends z.ZodType, In, O>(
  schema: S,
  build: (input: In, options: O) => unknown,
): Encoder<In, O> {
  return (input, options) => ({
    body: JSON.stringify(checked(schema, () => build(input, options))),
    contentType: 'application/json',
  });
}

/**
 * Fields encoded as application/x-www-form-urlencoded, sent as the body (the token request)
 * or as the query string (a GET with parameters).
 */
export function formEncoded<S extends z.ZodType<Record<string, string>>, In, O>(
  place: 'body' | 'query',
  schema: S,
  build: (input: In, options: O) => unknown,
): Encoder<In, O> {
  return (input, options) => {
    const text = new URLSearchParams(checked(schema, () => build(input, options))).toString();
    if (place === 'query') return { query: text };
    return { body: text, contentType: 'application/x-www-form-urlencoded' };
  };
}

/** The document upload: JSON with base64 content, or multipart/form-data on request. */
export function documentBody<In, O>(schema: typeof uploadDocumentSchema): Encoder<In, O> {
  return async (input, _options, context) => {
    const body = checked(schema, () => input);
    if (context.documentUpload === 'json') {
      return { body: JSON.stringify(body), contentType: 'application/json' };
    }
    const multipart = await uploadDocumentMultipart(
      body,
      decodeDocumentContent(body.contentBase64),
    );
    return { body: multipart.bytes, contentType: multipart.contentType };
  };
}

/** A JSON answer parsed with `schema`, then mapped; any failure is BAD_RESPONSE. */
export function reply<S extends z.ZodType, In, O, Out>(
  schema: S,
  map: (wire: z.output<S>, input: In, options: O) => Out,
): Decoder<In, O, Out> {
  return (input, options) => async (response, context) => {
    const text = await response.body.text();
    const json = parseJsonOrUndefined(text);
    if (json === undefined) {
      throw new PayflowBadResponseError(context.errorInit, 'the body is not JSON');
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new PayflowBadResponseError(
        context.errorInit,
        `the body does not match the schema: ${describeZodError(parsed.error)}`,
      );
    }
    try {
      return map(parsed.data, input, options);
    } catch (error) {
      throw new PayflowBadResponseError(
        { ...context.errorInit, cause: error },
        error instanceof Error ? error.message : 'cannot map the body',
      );
    }
  };
}

/** A text/csv answer, streamed to the caller (who reads it to the end or destroys it). */
export const csvStream: Decoder<unknown, unknown, SettlementCsv> = () => streamCsv;

async function streamCsv(
  response: Dispatcher.ResponseData,
  context: AttemptContext,
): Promise<SettlementCsv> {
  const contentType = headerValue(response.headers['content-type']) ?? '';
  if (!/^text\/csv\b/i.test(contentType)) {
    await response.body.dump();
    throw new PayflowBadResponseError(
      context.errorInit,
      `content type ${contentType || '(none)'} is not text/csv`,
    );
  }
  const source = response.body;
  const body = new PassThrough();
  source.on('error', (error: unknown) => {
    body.destroy(
      error instanceof PayflowError
        ? error
        : errorForTransport(error, {
            endpoint: context.errorInit.endpoint,
            method: context.errorInit.method,
            requestSent: true,
            status: context.status,
            abortedBy: undefined,
            attempt: context.attempt,
          }),
    );
  });
  // A consumer that gives up early releases the connection.
  body.on('close', () => {
    if (!source.readableEnded) source.destroy();
  });
  source.pipe(body);
  return { contentType, body, text: () => readAll(body) };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readAll(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks).toString('utf8');
}
