/**
 * The process's logger for `npm start`: pino JSON lines when stdout is not a terminal (a file, a pipe, a log
 * collector), readable coloured lines through pino-pretty when it is. Everything the process says goes through
 * it, the start banner included.
 *
 * @example
 *   const logger = createProcessLogger('info', process.stdout);
 */
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from '../config/config.js';

export type LogFormat = 'json' | 'pretty';

/** `pretty` for a terminal, `json` for anything else. */
export function chooseLogFormat(stdout: { isTTY?: boolean }): LogFormat {
  return stdout.isTTY === true ? 'pretty' : 'json';
}

/** A filter every JSON line passes through before it is printed (e.g. the redaction of secrets in URLs). */
export type LineFilter = (destination: { write(chunk: string): unknown }) => { write(chunk: string): void };

export function createProcessLogger(level: LogLevel, stdout: NodeJS.WriteStream, filter: LineFilter = (d) => ({ write: (c) => void d.write(c) })): Logger {
  const options = { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  if (chooseLogFormat(stdout) === 'json') return pino(options, filter(stdout));
  // synchronous, so the last lines before process.exit() are not lost
  return pino(options, filter(pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', destination: stdout })));
}
