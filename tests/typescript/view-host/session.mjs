// A client showing the pad view, as the browser test and the benchmark both drive it: a Node MCP
// client on the server, a browser context on the host page (view-host/host.html), and a call
// whose result the host page shows in the view. What travels is recorded for the checks.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { TOKEN, viewFrame } from './serve.mjs';

export const UI = 'io.modelcontextprotocol/ui';
export const APP_MIME = 'text/html;profile=mcp-app';
export const VIEW_URI = 'ui://rustpad/pad-view.html';
/** A client that renders views (and shows forms). */
export const WITH_VIEWS = { elicitation: { form: {} }, extensions: { [UI]: { mimeTypes: [APP_MIME] } } };

/**
 * A Node client on `url` with the bearer token; `bodies` collects every JSON-RPC message it
 * POSTs, so a test can see what travels in each request's `_meta`.
 */
export async function connect(url, mode, capabilities = WITH_VIEWS) {
  const bodies = [];
  const recording = (input, init) => {
    if (typeof init?.body === 'string') bodies.push(JSON.parse(init.body));
    return fetch(input, init);
  };
  const client = new Client({ name: 'rustpad-mcp-e2e-view', version: '1.0.0' }, { capabilities, versionNegotiation: { mode } });
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { confirm: true } }));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      fetch: recording,
    }),
  );
  return { client, bodies };
}

/**
 * A fresh browser context on the host page (`origins` from startOrigins), whose tool calls go
 * through `client`. It records every request of every frame, the page's errors, and each call
 * the view made.
 */
export async function openHost(browser, origins, client) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 720 } });
  const requests = [];
  context.on('request', (request) => requests.push(request.url()));
  const page = await context.newPage();
  page.on('request', (request) => requests.push(request.url()));
  const problems = [];
  page.on('pageerror', (error) => problems.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  const calls = [];
  const closing = new AbortController();
  await page.exposeFunction('hostCallTool', async (params) => {
    calls.push(params);
    // The view's waits end with its page, not 45 s later.
    return client.callTool(params, { signal: closing.signal });
  });
  await page.goto(origins.hostUrl);
  return {
    page,
    origins,
    requests,
    problems,
    calls,
    close: async () => {
      closing.abort();
      await context.close();
    },
  };
}

/** Calls `name` through `client`, then has the host page show the view for that call. */
export async function show(host, client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  const { tools } = await client.listTools();
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool?._meta?.ui?.resourceUri !== VIEW_URI) throw new Error(`${name} names no view`);
  const { contents } = await client.readResource({ uri: VIEW_URI });
  await host.page.evaluate((options) => window.showView(options), {
    sandboxUrl: host.origins.sandboxUrl,
    resource: contents[0],
    tool,
    toolInput: args,
    toolResult: result,
  });
  return { frame: await viewFrame(host.page), result };
}
