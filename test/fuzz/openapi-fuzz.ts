/**
 * Hostile input for every operation of our own OpenAPI document (/docs/json), sent through a real port.
 *
 * Requests are generated with fast-check from the documented schemas of each operation's path parameters,
 * query and body: valid requests (schema-conforming values, with real devnet tokens, accounts and an order UID
 * mixed in so that handlers get past validation), mutated ones (1–3 parts replaced by huge numbers, deep JSON,
 * wrong types, unicode, over-long strings, or dropped / added fields) and raw bodies (deep or broken JSON,
 * random bytes, oversize, wrong content type).
 *
 * Every answer must: not be a 5xx; come within the hang guard; have a status the operation documents; be in
 * the documented media type; and, when it is JSON, match the documented schema of that status. Errors must be
 * in their API's envelope: `{errorType, description}` for the order book, `{message}` elsewhere.
 */
import fc from 'fast-check';
import { Ajv, type ValidateFunction } from 'ajv';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  nullable?: boolean;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

interface Parameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: JsonSchema;
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  tags?: string[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

/** Real values of the node under test, so that valid requests reach the handlers' logic. */
export interface FuzzContext {
  chainIds: string[];
  networks: string[];
  tokens: string[];
  accounts: string[];
  orderUids: string[];
  hashes: string[];
  /**
   * Known-good requests per operation (`METHOD template`, order-book templates without the network prefix),
   * e.g. signed orders: the generator starts from them as often as from the schema, so that mutations reach
   * the handlers' logic and not only the validation.
   */
  examples?: Record<string, Partial<RequestParts>[]>;
}

export interface FuzzRequest {
  op: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** what the generator meant: 'valid' | 'mutated' | 'raw' */
  mode: string;
}

export interface Finding {
  op: string;
  kind: string;
  detail: string;
  request: FuzzRequest;
}

export interface FuzzReport {
  requests: number;
  seconds: number;
  perSecond: number;
  operations: number;
  operationsAnsweredOk: number;
  byStatus: Record<string, number>;
  byMode: Record<string, number>;
  findings: Finding[];
  /** operations that never got a 2xx in this run */
  neverOk: string[];
  /** the operations whose answers took longest in total (ms), slowest first */
  slowest: [string, number][];
}

const METHODS = new Set(['get', 'post', 'put', 'delete', 'patch']);
/** Fastify's router limit (server.ts maxParamLength): a longer path segment matches no route. */
const MAX_PARAM_LENGTH = 512;
/** The largest body any route accepts (server.ts MAX_BODY_LIMIT). */
const MAX_BODY_BYTES = 64 * 1024;
const ORDERBOOK_PATH = /^\/(?:[a-z_]+\/)?api\/v\d+(?:\/|$)/;

// ---------------------------------------------------------------------------------------------------------
// hostile values

const TWO_256 = (1n << 256n).toString();
const hugeNumbers = fc.constantFrom<unknown>(
  1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER - 2, 2 ** 64, 5e-324, -0, 0.5, -1, 4294967296,
  TWO_256, '-' + TWO_256, '9'.repeat(100), '1e999', '1e18', '0x' + 'f'.repeat(64), '1.5', '-1', ' 1', '1 ', '٣', 'NaN', 'Infinity',
);
const wrongTypes = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, '', [], {}, [null], { '': '' }, 'null', 'true', 'undefined'),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 20 }),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);
const unicode = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('\u0000', '\ud800', '\udfff', 'a\ud800b', '\u202e0x1234', 'İ', 'ﬀ', '🐮'.repeat(30), '０ｘ１２', '\r\n', '%00', '../..', '%', '%zz',
    '{{7*7}}', "' OR 1=1 --", '$(id)', '<script>', '0x' + 'Ａ'.repeat(40), '\u00a0'),
);
const longStrings = fc.constantFrom(100, 513, 1000, 5000, 17 * 1024, 70 * 1024).chain((n) =>
  fc.constantFrom('a', '9', 'é', '🐮', '0x', 'f').map((unit) => (unit === '0x' ? '0x' + 'ab'.repeat(n / 2) : unit.repeat(n))),
);
const deepJson = fc.tuple(fc.integer({ min: 50, max: 3000 }), fc.boolean()).map(([depth, arrays]) => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
});

/** A JSON value meant to break whatever expects something else. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hugeNumbers },
  { weight: 3, arbitrary: wrongTypes },
  { weight: 3, arbitrary: unicode },
  { weight: 1, arbitrary: longStrings },
  { weight: 1, arbitrary: deepJson },
);

// ---------------------------------------------------------------------------------------------------------
// schema-conforming values

const ADDRESS_NAMES = /^(userAddress|owner|address|account|from|receiver|walletAddress|trader|wallet)$/i;
const TOKEN_NAMES = /^(tokenAddress|token|sellToken|buyToken|baseTokenAddress|quoteTokenAddress|base|quote|tokens)$/i;

function hintFor(name: string | undefined, ctx: FuzzContext): fc.Arbitrary<unknown> | undefined {
  if (!name) return undefined;
  if (name === 'chainId') return fc.constantFrom(...ctx.chainIds);
  if (name === 'network' || name === 'blockchain') return fc.constantFrom(...ctx.networks);
  if (TOKEN_NAMES.test(name)) return name === 'tokens' ? fc.array(fc.constantFrom(...ctx.tokens), { minLength: 1, maxLength: 3 }).map((t) => t.join(',')) : fc.constantFrom(...ctx.tokens);
  if (ADDRESS_NAMES.test(name)) return fc.constantFrom(...ctx.accounts);
  if (/^(uid|orderUid)$/i.test(name) && ctx.orderUids.length) return fc.constantFrom(...ctx.orderUids);
  if (name === 'auction_id') return fc.integer({ min: 0, max: 50 });
  if (/hash$/i.test(name) && ctx.hashes.length) return fc.constantFrom(...ctx.hashes);
  return undefined;
}

/** Values that conform to `schema` (bounded in size), real ones preferred where the field's name says what it is. */
export function conforming(schema: JsonSchema | undefined, ctx: FuzzContext, name?: string, depth = 0): fc.Arbitrary<unknown> {
  const base = conformingBase(schema ?? {}, ctx, depth);
  const hint = hintFor(name, ctx);
  return hint ? fc.oneof({ weight: 3, arbitrary: hint }, { weight: 1, arbitrary: base }) : base;
}

function conformingBase(schema: JsonSchema, ctx: FuzzContext, depth: number): fc.Arbitrary<unknown> {
  let arb = conformingType(schema, ctx, depth);
  if (schema.nullable) arb = fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(null) });
  return arb;
}

function conformingType(schema: JsonSchema, ctx: FuzzContext, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((s) => conformingBase(s, ctx, depth)));
  if (schema.allOf?.length) return conformingBase(Object.assign({}, ...schema.allOf), ctx, depth);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      const max = Math.min(schema.maxLength ?? 64, 300);
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? Infinity) && s.length >= (schema.minLength ?? 0));
      if (schema.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) => d.toISOString());
      return fc.string({ minLength: Math.min(schema.minLength ?? 0, max), maxLength: max });
    }
    case 'integer':
      return fc.integer({ min: Math.max(schema.minimum ?? -(2 ** 40), Number.MIN_SAFE_INTEGER), max: Math.min(schema.maximum ?? 2 ** 40, Number.MAX_SAFE_INTEGER) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e12, max: schema.maximum ?? 1e12, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = schema.minItems ?? 0;
      return fc.array(conforming(schema.items, ctx, undefined, depth + 1), { minLength: min, maxLength: Math.max(min, Math.min(schema.maxItems ?? 4, 4)) });
    }
    case 'object': {
      const props = schema.properties ?? {};
      if (!Object.keys(props).length) return depth > 2 ? fc.constant({}) : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      const required = new Set(schema.required ?? []);
      const entries = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, conforming(s, ctx, k, depth + 1)]));
      return fc.record(entries, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

// ---------------------------------------------------------------------------------------------------------
// mutation of a whole request (path parameters, query and body as one tree)

export interface RequestParts {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  body?: unknown;
}

type Mutation = { at: number; action: 'replace' | 'drop' | 'add'; value: unknown; key: string };

function nodesOf(value: unknown, out: { parent: any; key: string | number }[] = [], parent?: any, key?: string | number, depth = 0): typeof out {
  if (parent !== undefined) out.push({ parent, key: key! });
  if (depth < 6 && value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) nodesOf(v, out, value, Array.isArray(value) ? Number(k) : k, depth + 1);
  }
  return out;
}

function applyMutation(parts: RequestParts, m: Mutation): void {
  // path parameters cannot be dropped (they are part of the route), only replaced
  const nodes = nodesOf(parts).filter((n) => !(n.parent === parts && n.key !== 'body'));
  if (!nodes.length) return;
  const node = nodes[m.at % nodes.length]!;
  const container = node.parent;
  if (m.action === 'replace' || container === parts.path) container[node.key] = m.value;
  else if (m.action === 'drop') {
    if (Array.isArray(container)) container.splice(node.key as number, 1);
    else delete container[node.key];
  } else {
    const target = node.parent[node.key];
    if (target && typeof target === 'object' && !Array.isArray(target)) target[m.key] = m.value;
    else if (Array.isArray(target)) target.push(m.value);
    else container[node.key] = m.value;
  }
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  action: fc.constantFrom<Mutation['action']>('replace', 'replace', 'replace', 'drop', 'add'),
  value: hostileValue,
  key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'extra', ''), fc.string({ maxLength: 10 })),
});

// ---------------------------------------------------------------------------------------------------------
// serialisation

function percentEncode(text: string): string {
  // Buffer encodes lone surrogates as U+FFFD instead of throwing like encodeURIComponent
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function asText(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v) ?? String(v);
}

function buildPath(template: string, params: Record<string, unknown>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => percentEncode(asText(params[name])));
}

function buildQuery(query: Record<string, unknown>): string {
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) && v.length < 50 ? v : [v]) pairs.push(`${percentEncode(k)}=${percentEncode(asText(one))}`);
  }
  return pairs.length ? '?' + pairs.join('&') : '';
}

const rawBody: fc.Arbitrary<{ body: string | Uint8Array; contentType: string }> = fc.oneof(
  fc.integer({ min: 100, max: 20_000 }).map((d) => ({ body: '['.repeat(d) + ']'.repeat(d), contentType: 'application/json' })),
  fc.integer({ min: 100, max: 5_000 }).map((d) => ({ body: '{"a":'.repeat(d) + '1' + '}'.repeat(d), contentType: 'application/json' })),
  fc.uint8Array({ maxLength: 300 }).map((b) => ({ body: b, contentType: 'application/json' })),
  fc.constantFrom('', '{', '{"a":1,}', 'null', '"x"', '1e999', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}', '[' + '1,'.repeat(9000) + '1]', '\ufeff{}', 'NaN')
    .map((body) => ({ body, contentType: 'application/json' })),
  fc.constantFrom(70 * 1024, 2 * 1024 * 1024).map((n) => ({ body: JSON.stringify({ x: 'a'.repeat(n) }), contentType: 'application/json' })),
  fc.tuple(fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/xml'), fc.string({ maxLength: 30 }))
    .map(([contentType, body]) => ({ body, contentType })),
);

// ---------------------------------------------------------------------------------------------------------
// one arbitrary per operation

export interface OperationUnderTest {
  key: string;
  method: string;
  template: string;
  operation: Operation;
  arbitrary: fc.Arbitrary<FuzzRequest>;
}

export function operationsOf(doc: OpenApiDocument, ctx: FuzzContext): OperationUnderTest[] {
  const out: OperationUnderTest[] = [];
  for (const [template, ops] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(ops)) {
      if (!METHODS.has(method)) continue;
      const key = `${method.toUpperCase()} ${template}`;
      out.push({ key, method: method.toUpperCase(), template, operation, arbitrary: requestsFor(key, method.toUpperCase(), template, operation, ctx) });
    }
  }
  return out;
}

function requestsFor(key: string, method: string, template: string, op: Operation, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const params = op.parameters ?? [];
  const pathNames = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const pathArb = fc.record(Object.fromEntries(pathNames.map((n) => [n, conforming(params.find((p) => p.in === 'path' && p.name === n)?.schema ?? { type: 'string' }, ctx, n)])));
  const queryParams = params.filter((p) => p.in === 'query');
  const queryArb = fc.record(Object.fromEntries(queryParams.map((p) => [p.name, conforming(p.schema, ctx, p.name)])), {
    requiredKeys: queryParams.filter((p) => p.required).map((p) => p.name),
  });
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  const hasBody = !!op.requestBody;
  const bodyArb = hasBody ? conforming(bodySchema, ctx) : fc.constant(undefined);
  const fromSchema: fc.Arbitrary<RequestParts> = fc.record({ path: pathArb, query: queryArb, body: bodyArb });
  const examples = ctx.examples?.[`${method} ${template.replace(/^\/[a-z_]+(?=\/api\/v\d)/, '')}`] ?? [];
  const partsArb: fc.Arbitrary<RequestParts> = examples.length
    ? fc.oneof(
        fromSchema,
        fc.tuple(fromSchema, fc.constantFrom(...examples)).map(([generated, example]) => {
          const e = structuredClone(example);
          return { path: { ...generated.path, ...e.path }, query: e.query ?? generated.query, body: 'body' in e ? e.body : generated.body };
        }),
      )
    : fromSchema;

  const toRequest = (mode: string, parts: RequestParts, raw?: { body: string | Uint8Array; contentType: string }): FuzzRequest => {
    const headers: Record<string, string> = {};
    let body: string | Uint8Array | undefined;
    if (raw) {
      body = raw.body;
      headers['content-type'] = raw.contentType;
    } else if (hasBody && parts.body !== undefined) {
      body = JSON.stringify(parts.body);
      headers['content-type'] = 'application/json';
    }
    return { op: key, method, path: buildPath(template, parts.path) + buildQuery(parts.query), headers, body, mode };
  };

  const valid = partsArb.map((parts) => toRequest('valid', parts));
  const mutated = fc.tuple(partsArb, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([parts, ms]) => {
    for (const m of ms) applyMutation(parts, m);
    return toRequest('mutated', parts);
  });
  const arbs = [
    { weight: 3, arbitrary: valid },
    { weight: 6, arbitrary: mutated },
  ];
  if (hasBody || method !== 'GET') arbs.push({ weight: 1, arbitrary: fc.tuple(partsArb, rawBody).map(([parts, raw]) => toRequest('raw', parts, raw)) });
  return fc.oneof(...arbs);
}

// ---------------------------------------------------------------------------------------------------------
// checking an answer

export class ResponseChecker {
  private readonly ajv = new Ajv({ strict: false, allErrors: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  constructor() {
    this.ajv.addFormat('date-time', true);
  }

  private validator(key: string, schema: object): ValidateFunction {
    let v = this.compiled.get(key);
    if (!v) this.compiled.set(key, (v = this.ajv.compile(schema)));
    return v;
  }

  /** the problems of one answer, empty when it is as documented */
  check(target: OperationUnderTest, request: FuzzRequest, status: number, contentType: string, text: string): { kind: string; detail: string }[] {
    const problems: { kind: string; detail: string }[] = [];
    const snippet = text.slice(0, 300);
    if (status >= 500) problems.push({ kind: `5xx ${status}`, detail: snippet });
    const mediaType = contentType.split(';')[0]!.trim();
    let body: any;
    let parsed = false;
    if (mediaType === 'application/json') {
      try {
        body = JSON.parse(text);
        parsed = true;
      } catch {
        problems.push({ kind: 'invalid JSON answer', detail: snippet });
      }
    }
    const documented = target.operation.responses[String(status)];
    // Node's HTTP parser refuses request lines and headers over 16 KiB before any route is known
    if (status === 431) {
      if (request.path.length < 15 * 1024) problems.push({ kind: '431 for a short request', detail: snippet });
      if (!(parsed && typeof body?.errorType === 'string' && typeof body?.message === 'string')) problems.push({ kind: '431 not in an envelope', detail: snippet });
      return problems;
    }
    const routeMissed = status === 404 && parsed && typeof (body?.description ?? body?.message) === 'string' && /^no route /.test(body.description ?? body.message);
    if (routeMissed) {
      // the request did not reach the operation: acceptable when a path segment cannot be sent or routed as
      // such (empty, `.` / `..` which URL parsing removes, over the router's limit), or when the operation
      // documents 404 anyway (e.g. a line break inside `{base}-{quote}`, which the router's pattern does not match)
      const segments = request.path.split('?')[0]!.split('/');
      const unroutable = segments.slice(1).some((s) => s === '' || /^(%2e|\.){1,2}$/i.test(s) || s.length > MAX_PARAM_LENGTH);
      if (!unroutable && !documented) problems.push({ kind: 'route not found', detail: `${request.path.slice(0, 200)}` });
    } else if (!documented) {
      problems.push({ kind: `undocumented status ${status}`, detail: snippet });
    } else {
      const content = documented.content;
      if (content && mediaType && !content[mediaType]) problems.push({ kind: `undocumented media type ${mediaType} for ${status}`, detail: `documented: ${Object.keys(content).join(', ')}` });
      if (parsed) {
        const schema = content?.['application/json']?.schema;
        if (!schema) problems.push({ kind: `JSON ${status} without documented schema`, detail: snippet });
        else {
          const validate = this.validator(`${target.key} ${status}`, schema);
          if (!validate(body)) problems.push({ kind: `${status} does not match its schema`, detail: `${this.ajv.errorsText(validate.errors)}: ${snippet}` });
        }
      }
    }
    if (status >= 400) {
      const orderbook = ORDERBOOK_PATH.test(request.path.split('?')[0]!);
      // an auxiliary route may document its own error shape (GET /hooks: `{hooks, count, error}`, as upstream)
      const required = documented?.content?.['application/json']?.schema?.required ?? [];
      const ownEnvelope = !orderbook && !!documented && !required.includes('message') && problems.length === 0;
      const ok = ownEnvelope || (orderbook
        ? parsed && typeof body?.errorType === 'string' && typeof body?.description === 'string'
        : parsed && typeof body?.message === 'string');
      if (!ok) problems.push({ kind: `${status} not in the ${orderbook ? 'order-book' : 'auxiliary'} envelope`, detail: `${contentType}: ${snippet}` });
    }
    return problems;
  }
}

// ---------------------------------------------------------------------------------------------------------
// running

export interface FuzzOptions {
  baseUrl: string;
  doc: OpenApiDocument;
  ctx: FuzzContext;
  requests: number;
  seed: number;
  concurrency?: number;
  /** a request not answered in this time is a hang */
  hangGuardMs?: number;
  onProgress?: (done: number) => void;
  /** called with each new finding as it is found */
  onFinding?: (finding: Finding) => void;
  /** stop starting new requests after this time (epoch ms); the report then says fewer requests */
  stopAt?: number;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const ops = operationsOf(options.doc, options.ctx);
  const checker = new ResponseChecker();
  const concurrency = options.concurrency ?? 8;
  const hangGuardMs = options.hangGuardMs ?? 60_000;
  // every operation equally often: a uniform pick of the operation, then that operation's generator
  const arbitrary = fc.constantFrom(...ops.map((_, i) => i)).chain((i) => ops[i]!.arbitrary.map((r) => [i, r] as const));
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const byStatus: Record<string, number> = {};
  const byMode: Record<string, number> = {};
  const okOps = new Set<string>();
  const msByOp = new Map<string, number>();
  const batch = 500;
  let done = 0;
  const started = performance.now();
  for (let offset = 0, round = 0; offset < options.requests && Date.now() < (options.stopAt ?? Infinity); offset += batch, round++) {
    const samples = fc.sample(arbitrary, { seed: options.seed + round, numRuns: Math.min(batch, options.requests - offset) });
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < samples.length) {
          const [i, request] = samples[next++]!;
          const target = ops[i]!;
          const record = (kind: string, detail: string) => {
            const id = `${target.key} | ${kind}`;
            if (seen.has(id)) return;
            seen.add(id);
            findings.push({ op: target.key, kind, detail, request });
            options.onFinding?.(findings[findings.length - 1]!);
          };
          byMode[request.mode] = (byMode[request.mode] ?? 0) + 1;
          const t0 = performance.now();
          try {
            const res = await fetch(options.baseUrl + request.path, {
              method: request.method,
              headers: request.headers,
              body: request.body,
              signal: AbortSignal.timeout(hangGuardMs),
            });
            const contentType = res.headers.get('content-type') ?? '';
            let text = '';
            // an event stream never ends: its headers are the answer
            if (contentType.startsWith('text/event-stream')) await res.body?.cancel();
            else text = await res.text();
            byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
            if (res.status < 300) okOps.add(target.key);
            for (const p of checker.check(target, request, res.status, contentType, text)) record(p.kind, p.detail);
          } catch (err) {
            const e = err as Error;
            const cause = String((e as { cause?: unknown }).cause ?? '');
            // a body far over every limit is refused (413) while the client still uploads it: the server closes
            // the connection, which the client sees as EPIPE or a reset (the next requests show the node is up)
            const oversize = (request.body?.length ?? 0) > MAX_BODY_BYTES && /EPIPE|ECONNRESET|other side closed/.test(cause);
            if (!oversize) record(e.name === 'TimeoutError' ? 'hang' : 'no answer', `${e.name}: ${e.message} ${cause}`);
          }
          const ms = performance.now() - t0;
          msByOp.set(target.key, (msByOp.get(target.key) ?? 0) + ms);
          if (process.env.FUZZ_SLOW && ms > Number(process.env.FUZZ_SLOW)) console.log(`slow ${Math.round(ms)} ms ${request.mode} ${request.method} ${request.path.slice(0, 120)} ${String(request.body ?? '').slice(0, 80)}`);
          done++;
        }
      }),
    );
    options.onProgress?.(done);
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    requests: done,
    seconds,
    perSecond: done / seconds,
    operations: ops.length,
    operationsAnsweredOk: okOps.size,
    byStatus,
    byMode,
    findings,
    neverOk: ops.map((o) => o.key).filter((k) => !okOps.has(k)),
    slowest: [...msByOp].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, ms]) => [k, Math.round(ms)]),
  };
}

/** A short readable account of findings, with the seed that reproduces them. */
export function describeFindings(findings: Finding[], seed: number): string {
  const lines = [`${findings.length} finding(s), seed ${seed}:`];
  for (const f of findings) {
    const body = f.request.body === undefined ? '' : typeof f.request.body === 'string' ? f.request.body.slice(0, 200) : `<${f.request.body.length} bytes>`;
    lines.push(`- ${f.op}: ${f.kind}\n    ${f.request.method} ${f.request.path.slice(0, 200)} ${f.request.headers['content-type'] ?? ''} ${body}\n    → ${f.detail.slice(0, 300)}`);
  }
  return lines.join('\n');
}
