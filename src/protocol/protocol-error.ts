/**
 * Base class of every error thrown by the pure protocol core.
 *
 * `code` is a stable machine-readable identifier that callers switch on (the HTTP layer maps it to its
 * own envelope); `message` is for humans. No HTTP notions live here.
 *
 * @example
 * try { parseOrderUid('0x12') } catch (e) { if (e instanceof ProtocolError) console.log(e.code) }
 */
export class ProtocolError<Code extends string = string> extends Error {
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}
