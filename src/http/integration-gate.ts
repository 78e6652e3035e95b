/**
 * Integration gates (spec §5) never hide a route: a disabled feature still answers, with 503 `{message}` naming
 * the variable that turns it back on, so clients and the OpenAPI document see the same routes in every setup.
 *
 * @example
 *   server.get('/affiliate/:address', { preHandler: integrationGate(config.cms.enabled, 'CMS_ENABLED') }, handler);
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuxError } from './errors.js';

export function integrationGate(enabled: boolean, variable: string): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return async () => {
    if (!enabled) throw new AuxError(503, `this feature is disabled on this server (${variable}=false); set ${variable}=true to enable it`);
  };
}
