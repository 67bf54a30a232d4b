// The pad view's figures for `make bench` (tests/bench/bench.py runs this and prints them against
// their targets): the view's size, and how long a person's edit takes to show in the view, from
// the edit sent to its line drawn, in headless Chromium through the SDK's host bridge, against
// rustpad-mcp --http. Prints one JSON line: {"view_bytes", "edit_to_view_ms": [...]}.
//
//   RUSTPAD_MCP_BIN=… RUSTPAD_TEST_SERVER_BIN=… node view-bench.mjs [EDITS]

import { statSync } from 'node:fs';
import { resolve } from 'node:path';

import { padId, startHttpServer, startRustpad } from './harness.mjs';
import { SEAL_KEY, TOKEN, bundleHost, launchChromium, readView, startOrigins, waitInFrame } from './view-host/serve.mjs';
import { connect, openHost, show } from './view-host/session.mjs';

const EDITS = Number(process.argv[2] ?? 15);
const VIEW_FILE = resolve(import.meta.dirname, '../../guest/view/pad-view.html');
/** How often the frame is looked at: the figures are this much coarser than the truth. */
const POLL_MS = 5;

const sleep = (ms) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
const waitsStarted = (host) => host.calls.filter((call) => call.name === 'follow_pad').length;

/** Resolves once `test()` holds, checking every few milliseconds. */
async function until(test, what, timeoutMs = 15_000) {
  for (const started = Date.now(); Date.now() - started < timeoutMs; await sleep(POLL_MS)) {
    if (await test()) return;
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

const rustpad = await startRustpad();
const server = await startHttpServer(rustpad.url, { RUSTPAD_MCP_HTTP_TOKEN: TOKEN, RUSTPAD_SEAL_KEY: SEAL_KEY });
await bundleHost();
const origins = await startOrigins();
const browser = await launchChromium();
const { client } = await connect(server.url, 'legacy');
const id = padId('view-bench');
await rustpad.seed(id, { text: 'the pad view, measured\n' });
const person = await rustpad.person(id, 'Typist');
const host = await openHost(browser, origins, client);
const latencies = [];
try {
  const { frame } = await show(host, client, 'get_document', { id });
  await waitInFrame(frame, readView, (view) => view.state === 'live', { what: 'the live view' });
  let waitsSeen = 0;
  for (let edit = 1; edit <= EDITS; edit++) {
    // Each edit comes while the view waits, as a person's next edit does: after the view drew
    // the last one and asked for the next (and that call had time to reach the server).
    await until(() => waitsStarted(host) > waitsSeen, 'the view waiting');
    waitsSeen = waitsStarted(host);
    await sleep(100);
    const marker = `edit ${edit} by a person`;
    const sent = performance.now();
    await person.append(`${marker}\n`);
    await until(
      async () => (await frame.evaluate(() => document.getElementById('pad').textContent)).includes(marker),
      `edit ${edit} in the view`,
    );
    latencies.push(Math.round((performance.now() - sent) * 10) / 10);
  }
} finally {
  await host.close();
  await person.leave();
  await client.close();
  await browser.close();
  await origins.stop();
  await server.stop();
  await rustpad.stop();
}
console.log(JSON.stringify({ view_bytes: statSync(VIEW_FILE).size, edit_to_view_ms: latencies }));
