// @ts-check
/**
 * A plain pass-through on the proxy's own stack, with nothing of the proxy in it: a uWS edge that
 * forwards each request to one upstream through an undici Pool (the proxy's upstream client, same
 * dispatch API) and relays the answer as it comes, status, headers and body. No policy, no
 * metering, no traces: what the stack alone costs, so the bench can show how much of the proxy's
 * cost is its own.
 *
 * CLI: node bench/yardstick/pass-through.js --upstream-url http://127.0.0.1:5001 [--port 0]
 */
import { parseArgs } from 'node:util';
import uWS from '@trufflesuite/uws-js-unofficial';
import { Pool } from 'undici';

/** Hop-by-hop headers, and those uWS writes itself. */
const DROP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'date', 'uwebsockets']);

const { values } = parseArgs({ options: { 'upstream-url': { type: 'string' }, port: { type: 'string', default: '0' } } });
const upstreamUrl = values['upstream-url'];
if (upstreamUrl === undefined) {
  console.error('usage: node bench/yardstick/pass-through.js --upstream-url <url> [--port <port>]');
  process.exit(2);
}
const pool = new Pool(upstreamUrl, { connections: 256 });

/**
 * @param {uWS.HttpResponse} res
 * @param {string} method
 * @param {string} path
 * @param {Record<string, string>} headers
 * @param {Buffer} body
 */
function forward(res, method, path, headers, body) {
  let gone = false;
  /** The status line and headers, written with the first bytes of the body. */
  let head = /** @type {(() => void) | null} */ (null);
  /** A body of a known length is relayed whole, in one write; any other as it comes. */
  let whole = /** @type {Buffer[] | null} */ (null);
  let written = false;
  /** @type {import('undici').Dispatcher.DispatchController | null} */
  let controller = null;
  res.onAborted(() => {
    gone = true;
    controller?.abort(new Error('client closed'));
  });
  pool.dispatch(
    { method: /** @type {import('undici').Dispatcher.HttpMethod} */ (method), path, headers, body },
    {
      onRequestStart(ctl) {
        controller = ctl;
      },
      onResponseStart(_ctl, statusCode, responseHeaders) {
        if (statusCode < 200) return;
        if (responseHeaders['content-length'] !== undefined) whole = [];
        head = () => {
          res.writeStatus(String(statusCode));
          for (const [name, value] of Object.entries(responseHeaders)) {
            if (DROP.has(name) || value === undefined) continue;
            for (const one of Array.isArray(value) ? value : [value]) res.writeHeader(name, one);
          }
        };
      },
      onResponseData(_ctl, chunk) {
        if (gone) return;
        if (whole !== null) {
          whole.push(chunk);
          return;
        }
        written = true;
        res.cork(() => {
          head?.();
          head = null;
          res.write(chunk);
        });
      },
      onResponseEnd() {
        if (gone) return;
        res.cork(() => {
          head?.();
          res.end(whole === null ? undefined : Buffer.concat(whole));
        });
      },
      onResponseError(_ctl, err) {
        if (gone) return;
        if (written) res.close();
        else res.cork(() => res.writeStatus('502').end(err.message));
      },
    },
  );
}

uWS
  .App()
  .any('/*', (res, req) => {
    const method = req.getMethod().toUpperCase();
    const query = req.getQuery();
    const path = query ? `${req.getUrl()}?${query}` : req.getUrl();
    /** @type {Record<string, string>} */
    const headers = {};
    req.forEach((name, value) => {
      if (!DROP.has(name)) headers[name] = value;
    });
    /** @type {Buffer[]} */
    const parts = [];
    // Replaced by forward's once the body is in; until then an abort only ends the reading.
    res.onAborted(() => {});
    res.onData((chunk, isLast) => {
      // uWS neuters the chunk when this returns.
      parts.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
      if (isLast) forward(res, method, path, headers, Buffer.concat(parts));
    });
  })
  .listen('127.0.0.1', Number(values.port), (socket) => {
    if (!socket) {
      console.error(`pass-through: cannot listen on port ${values.port}`);
      process.exit(1);
    }
    console.log(`pass-through listening on http://127.0.0.1:${uWS.us_socket_local_port(socket)}`);
  });

for (const signal of /** @type {const} */ (['SIGTERM', 'SIGINT'])) process.on(signal, () => process.exit(0));
