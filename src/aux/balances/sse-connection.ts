/**
 * One Server-Sent Events response (spec §6) that can never hold up anybody else:
 * - writes never wait: when the socket does not take a write (`write()` returns false), the connection is
 *   "blocked"; further messages are coalesced into one pending message built from the latest state when the
 *   socket drains (so a slow client receives fewer, current snapshots rather than a growing backlog), and pings
 *   are skipped meanwhile;
 * - a connection blocked for longer than `stallTimeoutMs` is hopelessly behind and is destroyed;
 * - the owner learns about the end of the connection exactly once, with the reason.
 *
 * @example
 *   const sse = new SseConnection(reply.raw, { onClose: (reason) => cleanUp(reason) });
 *   sse.open();
 *   sse.send('message', () => JSON.stringify(entries()));
 *   sse.ping();
 */
import type { ServerResponse } from 'node:http';

/** The five headers of spec §4.3. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'Access-Control-Allow-Origin': '*',
  'X-Accel-Buffering': 'no',
};

export type SseCloseReason = 'client' | 'stalled' | 'shutdown';

export interface SseConnectionOptions {
  /** destroy the connection when the client has not drained a write for this long (default 30 s) */
  stallTimeoutMs?: number;
  onClose: (reason: SseCloseReason) => void;
}

export interface SseConnectionStats {
  written: number;
  coalesced: number;
  pingsSkipped: number;
}

/** One SSE frame; `data` must not contain newlines (JSON.stringify output never does). */
export function sseFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}

export class SseConnection {
  readonly stats: SseConnectionStats = { written: 0, coalesced: 0, pingsSkipped: 0 };
  private blockedFlag = false;
  private pending: { event: string; build: () => string } | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  private ended = false;
  private readonly stallTimeoutMs: number;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: SseConnectionOptions,
  ) {
    this.stallTimeoutMs = options.stallTimeoutMs ?? 30_000;
    res.on('close', () => this.finish('client'));
    res.on('drain', () => this.onDrain());
  }

  /** True while the socket has not taken the last write. */
  get blocked(): boolean {
    return this.blockedFlag;
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Sends the status line and headers. */
  open(extraHeaders: Record<string, string> = {}): void {
    this.res.socket?.setNoDelay(true);
    this.res.writeHead(200, { ...SSE_HEADERS, ...extraHeaders });
    this.res.flushHeaders();
  }

  /** Sends an event now, or — while blocked — replaces any pending one; `build` runs when the frame is written. */
  send(event: string, build: () => string): void {
    if (this.ended) return;
    if (this.blockedFlag) {
      if (this.pending) this.stats.coalesced++;
      this.pending = { event, build };
      return;
    }
    this.write(sseFrame(event, build()));
  }

  /** A keep-alive ping (skipped while blocked: the connection is busy anyway). */
  ping(data: string = JSON.stringify({ timestamp: new Date().toISOString() })): void {
    if (this.ended) return;
    if (this.blockedFlag) {
      this.stats.pingsSkipped++;
      return;
    }
    this.write(sseFrame('ping', data));
  }

  /** Ends the stream (graceful shutdown); a blocked connection is destroyed rather than waited for. */
  end(): void {
    if (this.ended) return;
    if (this.blockedFlag) this.res.destroy();
    else this.res.end();
    this.finish('shutdown');
  }

  private write(frame: string): void {
    this.stats.written++;
    if (this.res.write(frame)) return;
    this.blockedFlag = true;
    this.stallTimer = setTimeout(() => {
      if (this.ended) return;
      this.res.destroy();
      this.finish('stalled');
    }, this.stallTimeoutMs);
    this.stallTimer.unref?.();
  }

  private onDrain(): void {
    if (!this.blockedFlag || this.ended) return;
    this.blockedFlag = false;
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
    const pending = this.pending;
    this.pending = null;
    if (pending) this.write(sseFrame(pending.event, pending.build()));
  }

  private finish(reason: SseCloseReason): void {
    if (this.ended) return;
    this.ended = true;
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
    this.pending = null;
    this.options.onClose(reason);
  }
}
