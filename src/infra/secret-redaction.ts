/**
 * Secrets in URLs: RPC and provider URLs carry API keys in their path, query or userinfo
 * (`https://eth-mainnet.example/v2/<key>`, `wss://user:pass@node/ws?apikey=<key>`), and libraries put the URL into
 * their error messages (viem: "URL: https://…"). `redactUrlSecrets` keeps only scheme, host and port of every URL
 * in a text; the logger's output stream and the HTTP error envelopes both pass through it.
 *
 * @example
 *   redactUrlSecrets('HTTP request failed. URL: https://rpc.example/v2/abc123') // 'HTTP request failed. URL: https://rpc.example/***'
 */
// scheme://[userinfo@]host[:port][/path][?query][#fragment], up to a quote, whitespace, bracket or backslash (JSON escapes)
const URL_IN_TEXT = /\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s"'<>\\/@]*@)?([^\s"'<>\\/?#]*)([^\s"'<>\\]*)/gi;

/**
 * The text with every URL cut down to scheme, host and port; `***` marks where a path, query or userinfo was.
 * URLs under one of `ownOrigins` (this node's own addresses, e.g. `http://127.0.0.1:8080`, printed in the start
 * banner) carry no secret and are kept whole.
 */
export function redactUrlSecrets(text: string, ownOrigins: readonly string[] = []): string {
  return text.replace(URL_IN_TEXT, (whole, scheme: string, host: string, rest: string) => {
    if (ownOrigins.some((origin) => whole === origin || whole.startsWith(`${origin}/`))) return whole;
    const hadUserInfo = whole.length > scheme.length + host.length + rest.length;
    const hasSecretPart = hadUserInfo || (rest !== '' && rest !== '/');
    return hasSecretPart ? `${scheme}${host}/***` : whole;
  });
}

/**
 * A destination for the logger (pino): every line goes to `destination` with URL secrets redacted, except URLs
 * under the origins `ownOrigins()` names at the time (the node's own addresses, known once it listens).
 */
export function redactingStream(destination: { write(chunk: string): unknown }, ownOrigins: () => readonly string[] = () => []): { write(chunk: string): void } {
  return {
    write(chunk: string) {
      destination.write(redactUrlSecrets(chunk, ownOrigins()));
    },
  };
}
