/**
 * A tiny static file server for the browser tests and the example page: serves a folder on
 * 127.0.0.1 (a secure context, as WebGPU requires), with or without the COOP/COEP headers that make
 * a page cross-origin isolated (SharedArrayBuffer, so `par` runs on Web Workers).
 *
 * Command line: `tsx scripts/static-server.ts <folder> [--port 8080] [--no-isolation]`.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
  '.json': 'application/json',
  '.css': 'text/css',
};

export interface StaticServer {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `root` on 127.0.0.1 (a free port); `isolated` adds COOP: same-origin and COEP: require-corp. */
export function serve(root: string, isolated: boolean, port = 0): Promise<StaticServer> {
  const server: Server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
    const headers: Record<string, string> = { 'cache-control': 'no-store' };
    if (isolated) {
      headers['cross-origin-opener-policy'] = 'same-origin';
      headers['cross-origin-embedder-policy'] = 'require-corp';
    }
    if (file !== root && !file.startsWith(root.endsWith(sep) ? root : root + sep)) {
      res.writeHead(403, headers).end();
      return;
    }
    try {
      const body = await readFile(file);
      headers['content-type'] = TYPES[extname(file)] ?? 'application/octet-stream';
      res.writeHead(200, headers).end(body);
    } catch {
      res.writeHead(404, headers).end('not found');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const p = typeof address === 'object' && address ? address.port : port;
      resolve({
        url: `http://127.0.0.1:${p}/`,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--port');
  const port = at >= 0 ? Number(args[at + 1]) : 8080;
  const folder = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--port');
  if (!folder) {
    console.error('usage: tsx scripts/static-server.ts <folder> [--port 8080] [--no-isolation]');
    process.exit(2);
  }
  const isolated = !args.includes('--no-isolation');
  const s = await serve(resolve(folder), isolated, port);
  console.log(
    `serving ${folder} at ${s.url} (${isolated ? 'cross-origin isolated: COOP/COEP headers' : 'no COOP/COEP'})`,
  );
}
