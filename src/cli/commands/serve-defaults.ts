/** Where `stormlab serve` listens unless told: apart from the server, so --help need not load it. */
export const SERVE_DEFAULTS = { port: '8080', host: '127.0.0.1' };
/** Where `stormlab proxy` listens unless told. */
export const PROXY_FLAG_DEFAULTS = { port: '8090', host: '127.0.0.1' };
