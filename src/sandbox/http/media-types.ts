/**
 * Which request bodies the sandbox reads (docs/assumptions.md, requests): JSON on every
 * endpoint, and besides it only what an endpoint documents: the token endpoint's form and
 * uploadDocument's multipart/form-data. Any other media type is 415 `unsupported_media_type` (fastify's
 * FST_ERR_CTP_INVALID_MEDIA_TYPE, mapped by the server's error handler), so a form or a
 * text body never reaches a JSON endpoint as if it were one.
 *
 * Parsers are scoped with fastify's encapsulation: `withBodies` registers routes in a
 * child context that reads the extra media types; the root reads JSON only.
 */
import type { FastifyInstance } from 'fastify';

export type ExtraBody = 'form' | 'multipart';

/** A file part of a multipart/form-data body. */
export interface FormFile {
  fileName: string;
  contentType: string;
  bytes: Buffer;
}

/** A multipart/form-data body as read: text fields and file parts, by name (first wins). */
export class MultipartForm {
  constructor(
    readonly fields: ReadonlyMap<string, string>,
    readonly files: ReadonlyMap<string, FormFile>,
  ) {}
}

/** Root context: JSON only (an empty body with `application/json` counts as no body). */
export function acceptJsonOnly(app: FastifyInstance): void {
  // JSON as fastify parses it (prototype-poisoning checks included), except that an empty
  // body is no body: clients that send `content-type: application/json` on every call,
  // DELETE included, are not refused for it.
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text.trim() === '') done(null, undefined);
    else void parseJson(request, text, done);
  });
}

/** Registers `routes` in a child context that also reads the `extra` media types. */
export function withBodies(
  app: FastifyInstance,
  extra: readonly ExtraBody[],
  routes: (scope: FastifyInstance) => void,
): void {
  void app.register((scope, _options, done) => {
    for (const kind of extra) PARSERS[kind](scope);
    routes(scope);
    done();
  });
}

/** RFC 7578 through the WHATWG FormData parser Node already has (undici's). */
async function readMultipart(contentType: string, body: Buffer): Promise<MultipartForm> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw Object.assign(new Error(`malformed multipart/form-data: ${reason}`), {
      statusCode: 400,
    });
  }
  const fields = new Map<string, string>();
  const files = new Map<string, FormFile>();
  for (const [name, value] of form.entries()) {
    if (fields.has(name) || files.has(name)) continue;
    if (typeof value === 'string') {
      fields.set(name, value);
    } else {
      files.set(name, {
        fileName: value.name,
        contentType: value.type === '' ? 'application/octet-stream' : value.type,
        bytes: Buffer.from(await value.arrayBuffer()),
      });
    }
  }
  return new MultipartForm(fields, files);
}

const PARSERS: Readonly<Record<ExtraBody, (scope: FastifyInstance) => void>> = {
  form: (scope) =>
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body.toString())));
      },
    ),
  multipart: (scope) =>
    scope.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer' },
      (request, body, done) => {
        readMultipart(request.headers['content-type'] ?? '', body as Buffer).then(
          (form) => done(null, form),
          (error: Error) => done(error),
        );
      },
    ),
};
