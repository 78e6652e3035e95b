/**
 * A minimal Server-Sent Events client over node:http for tests and the bench: records every event with its
 * arrival time, waits for events matching a predicate, and can stop reading (pause the socket) to play a slow
 * client. Non-200 answers are returned with their JSON body instead of a stream.
 *
 * @example
 *   const sse = await openSse(`${base}/31337/accounts/${user}/balances/sse?tokens=${usdc}`);
 *   const first = await sse.next((e) => e.event === 'message');
 *   sse.close();
 */
import { get, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

export interface SseEvent {
  event: string;
  data: string;
  /** performance.now() at arrival */
  at: number;
}

export interface SseClient {
  status: number;
  headers: IncomingHttpHeaders;
  /** the JSON body of a non-200 answer */
  body: unknown;
  events: SseEvent[];
  /** resolves with the first event (after index `from`, default: not yet returned by next) matching `match` */
  next(match?: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** stop reading: the socket's buffers fill up and the server's writes stop being taken */
  pause(): void;
  resume(): void;
  readonly ended: boolean;
  close(): void;
  /** resolves when the server ends or drops the stream */
  closed: Promise<void>;
}

export function openSse(url: string, options: { headers?: Record<string, string>; timeoutMs?: number; localAddress?: string } = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: { accept: 'text/event-stream', ...options.headers }, ...(options.localAddress ? { localAddress: options.localAddress } : {}) }, (res: IncomingMessage) => {
      req.setTimeout(0); // the timeout guards the answer, not the stream's quiet periods
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve(makeClient(status, res, body));
        });
        return;
      }
      resolve(makeClient(status, res, null));
    });
    req.on('error', reject);
    req.setTimeout(options.timeoutMs ?? 15_000, () => req.destroy(new Error(`no answer from ${url}`)));
  });
}

function makeClient(status: number, res: IncomingMessage, body: unknown): SseClient {
  const events: SseEvent[] = [];
  const waiters: Array<() => void> = [];
  let cursor = 0;
  let buffer = '';
  let ended = false;
  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const finish = (): void => {
    if (ended) return;
    ended = true;
    resolveClosed();
    for (const w of waiters.splice(0)) w();
  };
  if (status === 200) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        events.push({ event, data: data.join('\n'), at: performance.now() });
      }
      for (const w of waiters.splice(0)) w();
    });
    res.on('end', finish);
    res.on('close', finish);
    res.on('error', finish);
  } else {
    finish();
  }
  return {
    status,
    headers: res.headers,
    body,
    events,
    get ended() {
      return ended;
    },
    async next(match = () => true, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        for (let i = cursor; i < events.length; i++) {
          if (match(events[i])) {
            cursor = i + 1;
            return events[i];
          }
        }
        cursor = events.length;
        if (ended) throw new Error('the stream ended');
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no matching event within ${timeoutMs} ms`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
    },
    pause: () => res.pause(),
    resume: () => res.resume(),
    close: () => {
      res.destroy();
      finish();
    },
    closed,
  };
}
