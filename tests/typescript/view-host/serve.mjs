// What view.test.mjs runs besides rustpad-mcp: the component under `wasmtime serve`, the host
// page's bundle, the two origins it is served from, a canary server nothing may reach, Chromium,
// and helpers to look into the view's frame.

import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { createInterface } from 'node:readline';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

import { viewPolicy } from './csp.mjs';
import { stopper } from '../harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..', '..');
/** Built output of this test only (never committed). */
export const BUNDLE = resolve(repo, 'target/view-host/host.js');
export const SCREENSHOTS = resolve(repo, 'target/view-screenshots');
export const WASMTIME = process.env.WASMTIME_BIN ?? resolve(repo, 'target/wasmtime-cli/wasmtime_cli/wasmtime');
export const COMPONENT = process.env.RUSTPAD_MCP_HTTP_WASM ?? resolve(repo, 'target/wasm/rustpad-mcp-http.wasm');
/** The bearer token and seal key of every server these tests start. */
export const TOKEN = 'a-bearer-token-that-is-long-enough-0123456789';
export const SEAL_KEY = 'view-tests-share-this-seal-key-0123456789';
export const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
// Flags for a quiet, headless Chromium that calls no Google service of its own, so every request
// the test sees comes from the pages. (--no-sandbox: the test may run as root in a container.)
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A port nothing listens on yet. */
function freePort() {
  return new Promise((resolvePort, reject) => {
    const probe = createNetServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolvePort(port));
    });
  });
}

/** `wasmtime serve` running the component for WebAssembly hosts, as tests/python/wasm_hosts.py does. */
export async function startWasmtime(rustpadUrl) {
  const settings = {
    RUSTPAD_URL: rustpadUrl,
    RUSTPAD_SEAL_KEY: SEAL_KEY,
    RUSTPAD_MCP_HTTP_TOKEN: TOKEN,
    RUSTPAD_MCP_HTTP_HOSTS: '127.0.0.1',
  };
  const args = ['serve', '-Scli', '-Sinherit-network', '-Sallow-ip-name-lookup', '-W', 'timeout=60s'];
  args.push('--addr', `127.0.0.1:${await freePort()}`);
  for (const [name, value] of Object.entries(settings)) args.push('--env', `${name}=${value}`);
  const child = spawn(WASMTIME, [...args, COMPONENT], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
  });
  const output = [];
  const exited = new Promise((_, reject) =>
    child.once('exit', (code) => reject(new Error(`wasmtime serve exited early (${code}): ${output.join('\n')}`))),
  );
  const serving = new Promise((resolveUrl) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        const match = /Serving HTTP on (http:\/\/\S+?)\/?$/.exec(line);
        if (match) resolveUrl(`${match[1]}/mcp`);
      });
    }
  });
  const url = await Promise.race([serving, exited]);
  exited.catch(() => {});
  return { url, stop: stopper(child) };
}

/** Bundles host.mjs (with the SDK's AppBridge) into target/view-host/host.js. */
export async function bundleHost() {
  await mkdir(dirname(BUNDLE), { recursive: true });
  await build({
    entryPoints: [resolve(here, 'host.mjs')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outfile: BUNDLE,
    logLevel: 'warning',
  });
}

/** A node:http server on 127.0.0.1 and a free port; resolves with it once it listens. */
function listen(handler) {
  const server = createServer((request, response) => {
    Promise.resolve(handler(request, response)).catch((error) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
  });
  return new Promise((resolveServer, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveServer(server));
  });
}

function stopServer(server) {
  server.closeAllConnections?.();
  return new Promise((resolveStop) => server.close(() => resolveStop()));
}

function send(response, status, type, body, headers = {}) {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
  response.end(body);
}

/**
 * The host page at http://127.0.0.1:P1/host.html and the sandbox proxy at
 * http://localhost:P2/sandbox.html: two origins (host name and port both differ), as MCP Apps
 * asks. The sandbox page's Content-Security-Policy header is built from its `csp` parameter.
 */
export async function startOrigins() {
  const hostHtml = await readFile(resolve(here, 'host.html'));
  const hostJs = await readFile(BUNDLE);
  const sandboxTemplate = await readFile(resolve(here, 'sandbox.html'), 'utf8');
  const sandboxHtml = sandboxTemplate.replace('/* view-policy */', viewPolicy.toString());

  const hostServer = await listen((request, response) => {
    const { pathname } = new URL(request.url, 'http://host');
    if (pathname === '/host.html') return send(response, 200, 'text/html; charset=utf-8', hostHtml);
    if (pathname === '/host.js') return send(response, 200, 'text/javascript; charset=utf-8', hostJs);
    return send(response, 404, 'text/plain', 'not here');
  });
  const sandboxServer = await listen((request, response) => {
    const url = new URL(request.url, 'http://sandbox');
    if (url.pathname !== '/sandbox.html') return send(response, 404, 'text/plain', 'not here');
    let csp;
    try {
      csp = JSON.parse(url.searchParams.get('csp') ?? '{}');
    } catch {
      csp = {}; // the strictest policy
    }
    return send(response, 200, 'text/html; charset=utf-8', sandboxHtml, {
      'content-security-policy': viewPolicy(csp),
    });
  });
  const hostOrigin = `http://127.0.0.1:${hostServer.address().port}`;
  const sandboxOrigin = `http://localhost:${sandboxServer.address().port}`;
  return {
    hostOrigin,
    sandboxOrigin,
    hostUrl: `${hostOrigin}/host.html`,
    sandboxUrl: `${sandboxOrigin}/sandbox.html`,
    stop: () => Promise.all([stopServer(hostServer), stopServer(sandboxServer)]),
  };
}

/** A server that only counts: any request it gets means something escaped the view. */
export async function startCanary() {
  const hits = [];
  const server = await listen((request, response) => {
    hits.push(`${request.method} ${request.url}`);
    send(response, 200, 'text/plain', 'canary');
  });
  return { url: `http://127.0.0.1:${server.address().port}`, hits, stop: () => stopServer(server) };
}

/** Chromium through playwright-core, never a downloaded browser; undefined when it is missing. */
export async function launchChromium() {
  if (!existsSync(CHROMIUM)) return undefined;
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

const sleep = (ms) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

/** The view's own frame (the sandbox page's srcdoc child), once it exists. */
export async function viewFrame(page, timeoutMs = 15_000) {
  for (const started = Date.now(); Date.now() - started < timeoutMs; await sleep(100)) {
    const frame = page.frames().find((candidate) => candidate.url() === 'about:srcdoc');
    if (frame) return frame;
  }
  throw new Error(`no view frame after ${timeoutMs} ms; frames: ${page.frames().map((f) => f.url()).join(', ')}`);
}

/**
 * Polls `probe` (a function evaluated in `frame`) until `accept(value)` holds. Polling with
 * frame.evaluate rather than waitForFunction: evaluate goes through the DevTools protocol, which
 * the view's CSP (no eval) does not stop, and we must not weaken that CSP with bypassCSP.
 */
export async function waitInFrame(frame, probe, accept, { timeoutMs = 15_000, what = 'the view' } = {}) {
  let last;
  for (const started = Date.now(); Date.now() - started < timeoutMs; await sleep(100)) {
    last = await frame.evaluate(probe);
    if (accept(last)) return last;
  }
  throw new Error(`${what} never came within ${timeoutMs} ms; last seen: ${JSON.stringify(last)}`);
}

/**
 * What the view shows, read in its frame: its state, title, each line (number, classes, text,
 * people), the diff's rows, and any element inside #pad or #diff that is not one the view makes.
 * A line's `text` reads marks of invisible format characters (`span.ctl`, "U+202E") back as the
 * characters, so it can be compared with the pad's text.
 */
export function readView() {
  // A line's text as the pad has it: the marks of format characters read back as those
  // characters, selections' marks read through, people's name tags left out.
  const textOf = (node) =>
    [...node.childNodes]
      .map((child) => {
        if (child.nodeType !== Node.ELEMENT_NODE) return child.textContent;
        if (child.classList.contains('person')) return '';
        if (child.classList.contains('ctl') && /^U\+[0-9A-F]{4,6}$/.test(child.textContent)) {
          return String.fromCodePoint(parseInt(child.textContent.slice(2), 16));
        }
        return textOf(child);
      })
      .join('');
  // Tags and attributes that load or run something: none belongs in what the view draws.
  const risky = new Set(['SCRIPT', 'IMG', 'A', 'IFRAME', 'STYLE', 'LINK', 'OBJECT', 'EMBED', 'SVG', 'MATH', 'FORM', 'INPUT', 'BASE', 'META', 'VIDEO', 'AUDIO', 'SOURCE', 'FRAME']);
  const loads = (name) => /^on/i.test(name) || ['src', 'href', 'srcdoc', 'action', 'formaction', 'xlink:href', 'srcset'].includes(name.toLowerCase());
  return {
    state: document.body.dataset.state,
    title: document.getElementById('title')?.textContent ?? null,
    documentTitle: document.title,
    lines: [...document.querySelectorAll('#pad .line')].map((line) => ({
      line: Number(line.dataset.line),
      changed: line.classList.contains('changed'),
      number: line.querySelector('.number')?.textContent ?? null,
      text: line.querySelector('.text') ? textOf(line.querySelector('.text')) : null,
      rawText: line.querySelector('.text')?.textContent ?? null,
      people: [...line.querySelectorAll('.person:not(.selection)')].map((person) => person.dataset.name),
      writers: [...line.querySelectorAll('.person.writer')].map((person) => person.dataset.name),
      selections: [...line.querySelectorAll('mark.selection')].map((mark) => mark.title),
    })),
    diff: [...document.querySelectorAll('#diff .diff-line')].map((row) => ({
      kind: ['add', 'del', 'context', 'hunk'].find((kind) => row.classList.contains(kind)) ?? null,
      text: textOf(row),
    })),
    foreign: [...document.querySelectorAll('#pad *, #diff *, #people *, #title *, #status *')]
      .filter((element) => risky.has(element.tagName.toUpperCase()) || element.getAttributeNames().some(loads))
      .map((element) => element.outerHTML.slice(0, 200)),
  };
}
