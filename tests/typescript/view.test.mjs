// The pad view (MCP Apps, `ui://rustpad/pad-view.html`) in a real browser: Chromium, driven by
// playwright-core, shows a test host page built on the SDK's AppBridge (view-host/), which frames
// a sandbox proxy on a second origin, which frames the view. The view's tool calls come back to
// this process and go to the server through a Node MCP client, as a client's would.
//
// Against rustpad-mcp --http in 2025-11-25 (the extension declared at initialize) and the
// component under `wasmtime serve` in 2026-07-28 (declared in every request's _meta):
//   - the three tools name the view in tools/list, and resources/read gives it;
//   - the view shows a pad's lines and the people at them, and follows a person's edit by itself;
//   - a pad (and a person's name) full of markup and bidi controls stays text: nothing from it
//     runs, and no request leaves for any origin but the two test ones.
// Screenshots go to target/view-screenshots/. Needs /usr/bin/chromium (CHROMIUM_BIN) and, for the
// component, target/wasmtime-cli and target/wasm; without them the tests skip, or fail under CI=true.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';

import { padId, startHttpServer, useRustpad } from './harness.mjs';
import {
  CHROMIUM, COMPONENT, SCREENSHOTS, SEAL_KEY, TOKEN, WASMTIME, bundleHost, launchChromium, readView, startCanary, startOrigins,
  startWasmtime, viewFrame, waitInFrame,
} from './view-host/serve.mjs';
import { APP_MIME, UI, VIEW_URI, connect, openHost as openHostOn, show } from './view-host/session.mjs';

const VIEW_TOOLS = ['get_document', 'get_changes', 'edit_document', 'revert_changes'];
/** What the view may call by itself: it only reads. */
const READ_TOOLS = new Set(['get_document', 'follow_pad']);

/** A prerequisite that is missing skips the suite, except under CI=true, where it fails. */
const missing = (paths) => paths.filter((path) => !existsSync(path)).map((path) => `${path} is missing`).join('; ');
const skipUnlessCi = (why) => (why && process.env.CI !== 'true' ? why : false);
const browserMissing = missing([CHROMIUM]) && `${missing([CHROMIUM])} (Debian: apt-get install chromium)`;
const wasmMissing = missing([WASMTIME, COMPONENT]) && `${missing([WASMTIME, COMPONENT])} (make build test-clients)`;

const sleep = (ms) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

/** A pad's text and a person's name that would run, load or reorder if they were not kept text. */
function hostile(canary) {
  const lines = [
    `<script>document.title='pwned-script';parent.postMessage('pwned-script','*')</script>`,
    `<img src=x onerror="document.title='pwned-img';parent.postMessage('pwned-img','*')">`,
    `<a href="javascript:parent.postMessage('pwned-link','*')">click me</a>`,
    `<img src="${canary}/pwned-img"><link rel=stylesheet href="${canary}/pwned-link">`,
    `<style>@import url(${canary}/pwned-css);</style><iframe src="${canary}/pwned-frame"></iframe>`,
    `</span></div><svg onload="parent.postMessage('pwned-svg','*')"></svg>`,
    '\u202Eevil reversed\u202C and \u2066isolated\u2069 text,\u2028a separator and a zero\u200Dwidth joiner',
  ];
  return { lines, text: `${lines.join('\n')}\n`, name: `<img src=x onerror=parent.postMessage('pwned-name','*')>` };
}


describe('the pad view (MCP Apps) in Chromium', { skip: skipUnlessCi(browserMissing) }, () => {
  const rustpad = useRustpad();
  const shared = {};
  before(async () => {
    if (browserMissing) throw new Error(browserMissing);
    await mkdir(SCREENSHOTS, { recursive: true });
    await bundleHost();
    shared.origins = await startOrigins();
    shared.canary = await startCanary();
    shared.browser = await launchChromium();
  });
  after(async () => {
    await shared.browser?.close();
    await shared.origins?.stop();
    await shared.canary?.stop();
    console.log(`view screenshots: ${SCREENSHOTS}`);
  });



  const openHost = (client) => openHostOn(shared.browser, shared.origins, client);

  async function screenshot(t, host, name) {
    const path = resolve(SCREENSHOTS, `${name}.png`);
    // The frame the host gives the view, as a person would see it in a client.
    await host.page.locator('#frame-box iframe').screenshot({ path });
    t.diagnostic(`screenshot: ${path}`);
  }

  /** Nothing left the two test origins, nothing reached the canary, nothing from the pad ran. */
  async function assertContained(host, frame, what) {
    await sleep(1500); // time for anything the pad's text might have started to land
    const { hostOrigin, sandboxOrigin } = shared.origins;
    const outside = host.requests.filter(
      (url) => !url.startsWith(`${hostOrigin}/`) && !url.startsWith(`${sandboxOrigin}/`) && !/^(data|about):/.test(url),
    );
    assert.deepEqual(outside, [], `${what}: requests outside the test origins`);
    // The recorder does see the sandbox frame, which lives on the other origin (another process).
    assert.ok(host.requests.some((url) => url.startsWith(`${sandboxOrigin}/sandbox.html?`)), host.requests.join(' '));
    assert.deepEqual(shared.canary.hits, [], `${what}: the canary was reached`);
    const seen = await host.page.evaluate(() => window.hostSeen);
    const foreign = seen.messages.filter((message) => !('method' in message));
    assert.deepEqual(foreign, [], `${what}: the view's frame posted something that is not JSON-RPC`);
    assertOnlyViewMethods(seen, what);
    const title = await frame.evaluate(() => document.title);
    assert.doesNotMatch(title, /pwned/, `${what}: a script from the pad set the title`);
  }

  /**
   * What the view may ask of its host: the handshake, tool calls, its size and log lines. Never a
   * message to the model, a change to the model's context, or a link to open.
   */
  function assertOnlyViewMethods(seen, what) {
    const allowed = new Set([
      'ui/initialize', 'ui/notifications/initialized', 'ui/notifications/size-changed',
      'tools/call', 'notifications/message', 'notifications/cancelled',
      // (what the sandbox proxy and the host themselves send travels the same window)
      'ui/notifications/sandbox-proxy-ready', 'ui/notifications/sandbox-resource-ready',
    ]);
    const methods = [...new Set(seen.messages.filter((message) => message.method).map((message) => message.method))];
    assert.deepEqual(methods.filter((method) => !allowed.has(method)), [], `${what}: the view asked for ${methods}`);
    // (A diff view makes no call until a person asks it to follow; every view shakes hands.)
    assert.ok(methods.includes('ui/initialize'), `${what}: the recorder saw no handshake (${methods})`);
  }

  it('the checks below catch a view that draws the pad as markup (control)', async (t) => {
    const { text } = hostile(shared.canary.url);
    const html = `<!doctype html><html><head><title>careless view</title></head><body><div id="pad"></div>` +
      `<script>document.getElementById('pad').innerHTML = ${JSON.stringify(text).replace(/</g, '\\u003c')};</script></body></html>`;
    const host = await openHost(null);
    try {
      // No handshake: the careless view is no App; showView waits for one, so it is not awaited.
      host.page.evaluate((options) => window.showView(options), {
        sandboxUrl: shared.origins.sandboxUrl,
        resource: { uri: 'ui://test/careless.html', mimeType: APP_MIME, text: html, _meta: { ui: { csp: {} } } },
        tool: { name: 'careless', inputSchema: { type: 'object' } },
        toolInput: {},
        toolResult: { content: [] },
      }).catch(() => {});
      const frame = await viewFrame(host.page);
      await waitInFrame(frame, () => document.title, (title) => /pwned/.test(title), { what: 'the markup running' });
      await screenshot(t, host, 'control-careless-view');
      const seen = await host.page.evaluate(() => window.hostSeen);
      assert.ok(seen.messages.some((message) => /pwned-img/.test(message.raw ?? '')), JSON.stringify(seen.messages));
      // Even then the policy keeps every request inside the test origins.
      await sleep(1500);
      assert.deepEqual(shared.canary.hits, [], 'the sandbox policy let a request reach the canary');
    } finally {
      await host.close();
    }
  });

  /** The cases, against one server (`target()` gives `{url, mode, era, slug}` once it runs). */
  function viewCases(target) {
    const session = {};
    before(async () => {
      ({ client: session.client, bodies: session.bodies } = await connect(target().url, target().mode));
      assert.equal(session.client.getProtocolEra(), target().era);
    });
    after(async () => {
      await session.client?.close();
    });

    it('names the view on get_document, get_changes, edit_document and revert_changes, and serves it', async () => {
      const { tools } = await session.client.listTools();
      for (const tool of tools) {
        const expected = VIEW_TOOLS.includes(tool.name) ? VIEW_URI : undefined;
        assert.equal(tool._meta?.ui?.resourceUri, expected, tool.name);
      }
      // The view's own wait comes last, for the view alone (hidden from the model).
      assert.equal(tools.at(-1).name, 'follow_pad');
      assert.deepEqual(tools.at(-1)._meta, { ui: { visibility: ['app'] } });
      const { contents } = await session.client.readResource({ uri: VIEW_URI });
      assert.equal(contents.length, 1);
      assert.equal(contents[0].uri, VIEW_URI);
      assert.equal(contents[0].mimeType, APP_MIME);
      assert.match(contents[0].text, /^<!doctype html>/i);
      assert.deepEqual(contents[0]._meta?.ui, { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true });
      if (target().era === 'legacy') {
        // 2025-11-25: declared once, at initialize.
        const initialize = session.bodies.find((body) => body.method === 'initialize');
        assert.deepEqual(initialize?.params?.capabilities?.extensions?.[UI], { mimeTypes: [APP_MIME] });
      } else {
        // 2026-07-28 keeps no session: the extension must ride in each request's own _meta.
        const listed = session.bodies.filter((body) => body.method === 'tools/list');
        assert.ok(listed.length > 0);
        for (const body of listed) {
          assert.deepEqual(body.params?._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[UI], {
            mimeTypes: [APP_MIME],
          });
        }
      }
      // A client that does not declare the extension is not offered the view.
      const { client: plain } = await connect(target().url, target().mode, { elicitation: { form: {} } });
      try {
        const { tools: plainTools } = await plain.listTools();
        assert.deepEqual(plainTools.filter((tool) => tool._meta?.ui).map((tool) => tool.name), []);
        assert.deepEqual(plainTools.map((tool) => tool.name), tools.slice(0, -1).map((tool) => tool.name));
      } finally {
        await plain.close();
      }
    });

    it('shows the pad and the two people at their lines', async (t) => {
      const id = padId(`view-people-${target().slug}`);
      await rustpad.seed(id, { text: 'one\ntwo\nthree\nfour\n' });
      const [ada, bo] = [await rustpad.person(id, 'Ada'), await rustpad.person(id, 'Bo')];
      const host = await openHost(session.client);
      try {
        await ada.point([1]); // line 1, column 2
        // Line 3, column 3 ("one\ntwo\n" is 8 code points), selecting from line 2's start.
        await bo.point([10], [[4, 10]]);
        const { frame } = await show(host, session.client, 'get_document', { id });
        const view = await waitInFrame(frame, readView, (v) => v.state === 'live' && v.lines.length === 5, {
          what: 'the live view of four lines and the empty one after them',
        });
        assert.deepEqual(view.lines.map((line) => [line.line, line.number, line.text]), [
          [1, '1', 'one'], [2, '2', 'two'], [3, '3', 'three'], [4, '4', 'four'], [5, '5', ''],
        ]);
        assert.deepEqual(view.lines.map((line) => line.people), [['Ada'], [], ['Bo'], [], []]);
        // Each name tag stands at its caret's column, inside the text; the selection is marked.
        assert.deepEqual(view.lines.map((line) => line.rawText), ['oAdane', 'two', 'thBoree', 'four', '']);
        assert.deepEqual(view.lines.map((line) => line.selections), [[], ['Bo'], ['Bo'], [], []]);
        assert.match(view.title, new RegExp(id));
        await screenshot(t, host, `${target().slug}-people`);
        assert.ok(host.calls.every((call) => READ_TOOLS.has(call.name)), JSON.stringify(host.calls));
        assert.deepEqual(host.problems, []);
      } finally {
        await host.close();
        await ada.leave();
        await bo.leave();
      }
    });

    it("follows a person's edit by itself and marks the changed line", async (t) => {
      const id = padId(`view-follow-${target().slug}`);
      await rustpad.seed(id, { text: 'alpha\nbeta\ngamma\n' });
      const host = await openHost(session.client);
      try {
        const { frame } = await show(host, session.client, 'get_document', { id });
        await waitInFrame(frame, readView, (v) => v.state === 'live' && v.lines.length === 4, { what: 'the live view' });
        // The view's wait must be under way before the edit, or the test would not show it follows.
        for (let waited = 0; !host.calls.some((call) => call.name === 'follow_pad') && waited < 10_000; waited += 100) {
          await sleep(100);
        }
        assert.ok(host.calls.some((call) => call.name === 'follow_pad'), 'the view never waited for changes');
        await rustpad.setByPerson(id, 'alpha\nbeta, edited by a person\ngamma\n');
        const view = await waitInFrame(
          frame,
          readView,
          (v) => v.lines[1]?.text === 'beta, edited by a person',
          { timeoutMs: 10_000, what: "the person's edit" },
        );
        assert.equal(view.state, 'live');
        assert.deepEqual(view.lines.map((line) => line.changed), [false, true, false, false]);
        await screenshot(t, host, `${target().slug}-follow`);
        assert.ok(host.calls.every((call) => READ_TOOLS.has(call.name)), JSON.stringify(host.calls));
        assert.deepEqual(host.problems, []);
      } finally {
        await host.close();
      }
    });

    it("follows this server's own writes as they land (the model's edits)", async () => {
      const id = padId(`view-own-${target().slug}`);
      await rustpad.seed(id, { text: 'kept\n' });
      const host = await openHost(session.client);
      try {
        const { frame } = await show(host, session.client, 'get_document', { id });
        await waitInFrame(frame, readView, (v) => v.state === 'live' && v.lines.length === 2, { what: 'the live view' });
        // (wait_for_changes would not end here: it waits for people, not for this server.)
        const appended = await session.client.callTool({ name: 'append_to_document', arguments: { id, text: 'added by the model\n' } });
        assert.notEqual(appended.isError, true, JSON.stringify(appended.content));
        const view = await waitInFrame(frame, readView, (v) => v.lines[1]?.text === 'added by the model', {
          timeoutMs: 10_000,
          what: "the model's edit",
        });
        assert.deepEqual(view.lines.map((line) => line.changed), [false, true, false]);
      } finally {
        await host.close();
      }
    });

    it("shows this server's caret while it writes", async (t) => {
      const id = padId(`view-writer-${target().slug}`);
      await rustpad.seed(id, { text: 'first\nsecond\n' });
      const ana = await rustpad.person(id, 'Ana');
      const host = await openHost(session.client);
      const writing = new AbortController();
      let write;
      try {
        const { frame } = await show(host, session.client, 'get_document', { id });
        await waitInFrame(frame, readView, (v) => v.state === 'live' && v.lines.length === 3, { what: 'the live view' });
        // Rustpad never takes the write's edit, so the write's connection (and its caret at the
        // change) stays in the pad until the call is cancelled. (An edit that was made would end
        // the writer: views leave out a write of this server's that has made its edit.)
        await rustpad.setMode(id, 'drop-edit');
        // A named write (an append goes nameless, without a caret, in a host that keeps its
        // connection): it only adds, at the end.
        const adding = { id, search: 'second\n', replace: 'second\nthird\n' };
        write = session.client
          .callTool({ name: 'replace_in_document', arguments: adding }, { signal: writing.signal })
          .catch(() => 'cancelled');
        // The view is redrawn when the text changes: once Ana has seen the writer's caret, she
        // types a line at the end, before it.
        await ana.sees((line) => line.server?.UserCursor?.data?.cursors?.[0] === 13);
        await ana.append('fourth\n');
        const view = await waitInFrame(frame, readView, (v) => v.lines.some((line) => line.writers.length > 0), {
          what: "this server's caret",
        });
        const line = view.lines.find((candidate) => candidate.writers.length > 0);
        assert.deepEqual(line.writers, ['rustpad-mcp']);
        // Carried past Ana's line, as Rustpad carries a caret: the empty last line.
        assert.equal(line.line, 4);
        await screenshot(t, host, `${target().slug}-writer`);
      } finally {
        writing.abort();
        await write;
        await rustpad.setMode(id, '');
        await ana.leave();
        await host.close();
      }
    });

    it('draws a person who calls themselves rustpad-mcp as a person', async (t) => {
      const id = padId(`view-namesake-${target().slug}`);
      await rustpad.seed(id, { text: 'one\ntwo\n' });
      // Any case, and with a bidi control inside (the server strips it from names): only the
      // pad's history says who writes.
      const names = ['rustpad-mcp', 'RUSTPAD-MCP', 'rustpad\u202e-mcp'];
      const people = [];
      for (const name of names) people.push(await rustpad.person(id, name));
      const host = await openHost(session.client);
      try {
        await people[0].point([1]);
        await people[1].point([5]);
        await people[2].point([6]);
        const { frame } = await show(host, session.client, 'get_document', { id });
        const view = await waitInFrame(
          frame,
          readView,
          (v) => v.state === 'live' && v.lines.flatMap((line) => line.people).length === names.length,
          { what: 'three people named like this server' },
        );
        assert.deepEqual(view.lines.map((line) => line.people), [['rustpad-mcp'], ['RUSTPAD-MCP', 'rustpad-mcp'], []]);
        assert.deepEqual(view.lines.flatMap((line) => line.writers), [], 'a person was drawn as this server');
        const listed = await frame.evaluate(() => [...document.querySelectorAll('#people li')].map((item) => item.className));
        assert.deepEqual(listed, ['', '', '']);
        await screenshot(t, host, `${target().slug}-namesakes`);
      } finally {
        await host.close();
        for (const person of people) await person.leave();
      }
    });

    it('keeps markup, links and bidi controls from the pad as text', async (t) => {
      const { lines, text, name } = hostile(shared.canary.url);
      const id = padId(`view-hostile-${target().slug}`);
      await rustpad.seed(id, { text: 'harmless\n' });
      // A window (start_line) carries the base get_changes starts from.
      const before = await session.client.callTool({ name: 'get_document', arguments: { id, start_line: 1 } });
      await rustpad.setByPerson(id, text);
      const person = await rustpad.person(id, name);
      let host = await openHost(session.client);
      try {
        await person.point([0]);
        const { frame } = await show(host, session.client, 'get_document', { id });
        const view = await waitInFrame(frame, readView, (v) => v.state === 'live' && v.lines.length === lines.length + 1, {
          what: 'the hostile pad, live',
        });
        assert.deepEqual(view.lines.map((line) => line.text), [...lines, '']);
        // What reorders or breaks text is drawn as marks, not taken as what it means.
        for (const mark of ['U+202E', 'U+202C', 'U+2066', 'U+2069', 'U+2028', 'U+200D']) {
          assert.ok(view.lines[6].rawText.includes(mark), `${mark} not marked: ${view.lines[6].rawText}`);
        }
        assert.deepEqual(view.lines[0].people, [name]);
        assert.deepEqual(view.foreign, []);
        await frame.click('.line[data-line="3"] .text'); // where the javascript: link would be
        await screenshot(t, host, `${target().slug}-hostile-text`);
        await assertContained(host, frame, 'get_document view');
        await host.close();

        // The same text as a diff (get_changes from before the person's edit).
        host = await openHost(session.client);
        const base = before.structuredContent.base;
        const { frame: diffFrame } = await show(host, session.client, 'get_changes', { id, base });
        const diff = await waitInFrame(diffFrame, readView, (v) => v.state === 'diff' && v.diff.length > 0, {
          what: 'the diff view',
        });
        // The header rows (--- and +++) come before the first hunk and are neither del nor add.
        assert.deepEqual(diff.diff.slice(0, 2).map((row) => row.kind), [null, null]);
        const hunk = diff.diff.slice(diff.diff.findIndex((row) => row.kind === 'hunk') + 1);
        const rows = (kind) => hunk.filter((row) => row.kind === kind).map((row) => row.text.slice(1));
        assert.deepEqual(rows('del'), ['harmless']);
        assert.deepEqual(rows('add'), lines);
        assert.deepEqual(diff.foreign, []);
        await screenshot(t, host, `${target().slug}-hostile-diff`);
        await assertContained(host, diffFrame, 'get_changes view');
        // A diff view waits to be asked: no call until a person presses Follow, then it follows.
        assert.deepEqual(host.calls, []);
        await diffFrame.click('#follow');
        const following = await waitInFrame(diffFrame, readView, (v) => v.state === 'live' && v.lines.length === lines.length + 1, {
          what: 'the diff view, following after Follow',
        });
        assert.deepEqual(following.lines.map((line) => line.text), [...lines, '']);
        assertOnlyViewMethods(await host.page.evaluate(() => window.hostSeen), 'the diff view, following');
        assert.ok(host.calls.every((call) => READ_TOOLS.has(call.name)), JSON.stringify(host.calls));
      } finally {
        await host.close();
        await person.leave();
      }
    });
  }

  describe('rustpad-mcp --http, 2025-11-25 (the extension declared at initialize)', () => {
    let server;
    before(async () => {
      server = await startHttpServer(rustpad.url, { RUSTPAD_MCP_HTTP_TOKEN: TOKEN, RUSTPAD_SEAL_KEY: SEAL_KEY });
    });
    after(async () => {
      await server?.stop();
    });
    viewCases(() => ({ url: server.url, mode: 'legacy', era: 'legacy', slug: 'native' }));
  });

  describe('wasmtime serve, 2026-07-28 (the extension in each request)', { skip: skipUnlessCi(wasmMissing) }, () => {
    let server;
    before(async () => {
      if (wasmMissing) throw new Error(wasmMissing);
      server = await startWasmtime(rustpad.url);
    });
    after(async () => {
      await server?.stop();
    });
    viewCases(() => ({ url: server.url, mode: 'auto', era: 'modern', slug: 'wasmtime' }));
  });
});
