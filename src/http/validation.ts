/**
 * Schema validation with Ajv: JSON bodies are validated as sent (no type coercion: an amount sent as a number
 * is an error, not silently converted), while path and query parameters — always strings on the wire — are
 * coerced to the declared types.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { createRequire } from 'node:module';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(coerce: boolean) {
  return new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
}

export function buildValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv(false);
  const coercing = makeAjv(true);
  // every order-book route exists twice (under /{network} and at the root) with equal schemas: compile each once
  const compiled = new Map<string, ReturnType<FastifySchemaCompiler<unknown>>>();
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    const key = `${httpPart === 'body' ? 'strict' : 'coercing'}:${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = compiledOnFirstUse(() => {
        const fn = ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
        return httpPart !== 'body' ? exactNumbersOnly(fn) : fn;
      });
      compiled.set(key, validate);
    }
    return validate;
  };
}

/**
 * A validator compiled by its first request rather than at start: a node serves some 200 routes and compiling
 * all their schemas was a second of every start's CPU, most of it for routes a given run never calls.
 */
function compiledOnFirstUse(compile: () => ReturnType<FastifySchemaCompiler<unknown>>): ReturnType<FastifySchemaCompiler<unknown>> {
  let validate: ReturnType<FastifySchemaCompiler<unknown>> | null = null;
  const lazy = ((data: unknown) => {
    validate ??= compile();
    const ok = (validate as (d: unknown) => boolean)(data);
    (lazy as { errors?: unknown }).errors = (validate as { errors?: unknown }).errors;
    return ok;
  }) as ReturnType<FastifySchemaCompiler<unknown>>;
  return lazy;
}

/**
 * Coercion turns `Infinity` or `1e300` into a number that passes `type: integer`, and `9007199254740993` into a
 * neighbour: a path or query number must be finite, and an integer must be exact (a safe integer).
 */
function exactNumbersOnly(validate: ReturnType<FastifySchemaCompiler<unknown>>): ReturnType<FastifySchemaCompiler<unknown>> {
  const wrapped = ((data: unknown) => {
    const ok = (validate as (d: unknown) => boolean)(data);
    (wrapped as { errors?: unknown }).errors = (validate as { errors?: unknown }).errors;
    if (!ok || !data || typeof data !== 'object') return ok;
    for (const [name, value] of Object.entries(data)) {
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v === 'number' && (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v)))) {
          (wrapped as { errors?: unknown }).errors = [{ instancePath: `/${name}`, keyword: 'type', params: {}, message: 'must be a finite number (integers at most 2^53 - 1 in magnitude)' }];
          return false;
        }
      }
    }
    return true;
  }) as ReturnType<FastifySchemaCompiler<unknown>>;
  return wrapped;
}

/** "body.sellAmount: must be string" — names the field that failed. */
export function describeValidationError(context: string | undefined, errors: Partial<ErrorObject>[]): { field: string; description: string } {
  const first = errors[0] ?? {};
  const part = context ?? 'request';
  let path = (first.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const params = (first.params ?? {}) as Record<string, unknown>;
  if (first.keyword === 'required' && typeof params.missingProperty === 'string') {
    path = path ? `${path}.${params.missingProperty}` : params.missingProperty;
    return { field: path, description: `${part}.${path} is required` };
  }
  if (first.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    path = path ? `${path}.${params.additionalProperty}` : params.additionalProperty;
    return { field: path, description: `${part}.${path} is not allowed` };
  }
  let message = first.message ?? 'is invalid';
  if (first.keyword === 'enum' && Array.isArray(params.allowedValues)) message = `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  const field = path || part;
  return { field, description: `${path ? `${part}.${path}` : part}: ${message}` };
}

type SerializerFactory = (externalSchemas: unknown, serializerOpts: unknown) => (route: { schema: unknown }) => (data: unknown) => string;

/**
 * Fastify's own response serializers (fast-json-stringify, as its default compiler builds them), each built by
 * the first response it serialises instead of at start: building the serializers of every route was another
 * half second of each start's CPU. Fastify's default compiler is looked up beside Fastify (it is Fastify's
 * dependency, not ours), so the output is byte for byte what Fastify would send.
 */
export function lazyResponseSerializers(): SerializerFactory {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  const buildDefault = (fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerFactory }).SerializerSelector();
  return (externalSchemas, serializerOpts) => {
    const compile = buildDefault(externalSchemas, serializerOpts);
    return (route) => {
      let serialize: ((data: unknown) => string) | null = null;
      return (data) => (serialize ??= compile(route))(data);
    };
  };
}
