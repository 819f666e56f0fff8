/**
 * The console's stylesheet and script (`GET /console/assets/console.css`, `…/console.js`),
 * read once at start from this folder (copied to dist/ by the build). Served signed out
 * too: the sign-in page needs its stylesheet.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ConsolePage } from '../page/console-page.decorator.js';
import { CONSOLE_ROOT } from '../page/console-views.js';

const ASSETS: Readonly<Record<string, string>> = {
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
};

@Controller('console/assets')
@ConsolePage({ signedOut: true })
export class AssetsController {
  private readonly files = new Map(
    Object.entries(ASSETS).map(([name, type]) => [
      name,
      { type, body: readFileSync(join(CONSOLE_ROOT, 'assets', name)) },
    ]),
  );

  @Get(':name')
  asset(@Param('name') name: string, @Res({ passthrough: true }) reply: FastifyReply): Buffer {
    const file = this.files.get(name);
    if (file === undefined) throw new NotFoundException();
    void reply.header('content-type', file.type).header('cache-control', 'private, max-age=300');
    return file.body;
  }
}
