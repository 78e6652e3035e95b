/**
 * The dashboard's static files: `web/` at `/` (index.html with a server-rendered summary for readers without
 * JavaScript), `/favicon.ico`, and the browser libraries served from their npm packages under
 * `/dashboard/vendor/` (no copies in the repository, no build step). Files are read once at registration; each
 * answer carries an ETag, and a matching If-None-Match gets 304.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpServer } from '../http/server.js';

/** The browser libraries: URL name → file inside node_modules. */
export const VENDOR_FILES: Readonly<Record<string, string>> = {
  'preact.mjs': 'preact/dist/preact.mjs',
  'preact-hooks.mjs': 'preact/hooks/dist/hooks.mjs',
  'htm.mjs': 'htm/dist/htm.mjs',
  'uplot.js': 'uplot/dist/uPlot.iife.min.js',
  'uplot.css': 'uplot/dist/uPlot.min.css',
};

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
  cacheControl: string;
}

export interface StaticSiteOptions {
  /** the project root (holds web/ and node_modules/); default: two levels above this module */
  root?: string;
  /** the HTML shown without JavaScript, placed into index.html's `<!--server-summary-->` */
  renderSummary: () => Promise<string>;
}

function load(path: string, cacheControl: string): StaticFile {
  const body = readFileSync(path);
  return { body, type: CONTENT_TYPES[extname(path)] ?? 'application/octet-stream', etag: `"${createHash('sha1').update(body).digest('base64url')}"`, cacheControl };
}

function send(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  reply.header('etag', file.etag).header('cache-control', file.cacheControl);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.code(200).type(file.type).send(file.body);
}

/**
 * A file of an installed package, looked up as Node looks up packages: `node_modules/` of the project root, then of
 * each directory above it (installed as a dependency, the packages sit beside this one, not inside it).
 */
export function findInNodeModules(root: string, path: string): string {
  for (let dir = root; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', path);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return join(root, 'node_modules', path);
  }
}

export function registerStaticSite(server: HttpServer, options: StaticSiteOptions): void {
  const root = options.root ?? fileURLToPath(new URL('../../', import.meta.url));
  const webDir = join(root, 'web');
  const hide = { schema: { hide: true }, config: { api: 'aux' as const } };
  const files = new Map<string, StaticFile>();
  for (const name of readdirSync(webDir)) {
    if (name === 'index.html' || !CONTENT_TYPES[extname(name)]) continue;
    files.set(`/dashboard/${name}`, load(join(webDir, name), 'no-cache'));
  }
  for (const [name, path] of Object.entries(VENDOR_FILES)) files.set(`/dashboard/vendor/${name}`, load(findInNodeModules(root, path), 'public, max-age=86400'));
  const favicon = files.get('/dashboard/favicon.svg');
  if (favicon) files.set('/favicon.ico', favicon);
  for (const [url, file] of files) server.get(url, hide, async (request, reply) => send(request, reply, file));

  const template = readFileSync(join(webDir, 'index.html'), 'utf8');
  server.get('/', hide, async (_request, reply) => {
    const html = template.replace('<!--server-summary-->', await options.renderSummary());
    return reply.code(200).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html);
  });
}
