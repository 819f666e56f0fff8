/**
 * Which methods each route path serves, for 405 Method Not Allowed with `Allow` (RFC 9110
 * §15.5.6) when a known path is called with another method; a path no route serves stays
 * 404. Routes are recorded as fastify registers them (the `onRoute` hook), so the list
 * cannot drift from the routes.
 */
import type { FastifyInstance } from 'fastify';

interface RoutePath {
  pattern: RegExp;
  methods: Set<string>;
}

export class RouteMethods {
  private readonly paths = new Map<string, RoutePath>();

  /** Records every route registered on `app` from now on (call before adding routes). */
  track(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      let entry = this.paths.get(route.url);
      if (!entry) {
        entry = { pattern: compileRoutePath(route.url), methods: new Set() };
        this.paths.set(route.url, entry);
      }
      for (const method of methods) entry.methods.add(method.toUpperCase());
      // fastify answers HEAD for every GET route (exposeHeadRoutes).
      if (entry.methods.has('GET')) entry.methods.add('HEAD');
    });
  }

  /** The methods some route serves at this path (without query), sorted; empty when none. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const entry of this.paths.values()) {
      if (entry.pattern.test(path)) for (const method of entry.methods) methods.add(method);
    }
    return [...methods].sort();
  }
}

/** `/api/payments/:payflow_id` → a regular expression where a parameter is one segment. */
export function compileRoutePath(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}
