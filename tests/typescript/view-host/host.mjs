// The test host page's script (bundled by view.test.mjs into target/view-host/host.js). It plays
// the part of a client that renders MCP Apps views, through the SDK's own host side (AppBridge),
// so the view meets the same handshake and messages a real client sends.
//
// The page holds no MCP client: the test makes the tool call itself, through a Node client, and
// hands the page the result and the view's HTML (`showView`). Calls the view makes go back out to
// the test through `window.hostCallTool`, a function the test exposes with Playwright, which calls
// the server with that same Node client. The browser therefore never talks to the MCP server, and
// any request the browser makes outside the two test origins is one the view (or the pad's text)
// caused.

import { AppBridge, PostMessageTransport, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/app-bridge';

const HOST_INFO = { name: 'rustpad-mcp-view-test-host', version: '1.0.0' };
/** The tallest the frame grows when the view asks for more room. */
const MAX_HEIGHT = 900;

/** What the page saw, for the test to read back with page.evaluate(). */
const seen = {
  /** Every message that reached this window: JSON-RPC ones by method, anything else as is. */
  messages: [],
  /** Log lines the view sent (notifications/message). */
  logs: [],
  /** Heights the view asked for. */
  sizes: [],
  /** Set once the view finished the ui/initialize handshake. */
  initialized: false,
  /** What went wrong on this side, if anything. */
  errors: [],
};
window.hostSeen = seen;

// Everything that posts to this window is recorded here, before the SDK's transport filters it:
// a pad whose text ran as script could only reach us this way (the sandbox relays whatever the
// view's frame posts), so a non-JSON-RPC message is the sign the test looks for.
window.addEventListener('message', (event) => {
  const data = event.data;
  if (data && typeof data === 'object' && data.jsonrpc === '2.0') {
    seen.messages.push({ origin: event.origin, method: data.method ?? null, id: data.id ?? null });
  } else {
    let raw;
    try {
      raw = JSON.stringify(data);
    } catch {
      raw = String(data);
    }
    seen.messages.push({ origin: event.origin, raw: String(raw).slice(0, 500) });
  }
});

function status(text) {
  document.getElementById('status').textContent = text;
}

/**
 * Shows one view for one tool call, as a client would after the call ended.
 * @param {{
 *   sandboxUrl: string,          // the sandbox proxy page, on the other origin
 *   resource: {uri: string, mimeType: string, text: string, _meta?: any},
 *   tool: object,                // the tool as tools/list gave it (for the host context)
 *   toolInput: object,           // the call's arguments
 *   toolResult: object,          // the call's result
 * }} options
 */
window.showView = async ({ sandboxUrl, resource, tool, toolInput, toolResult }) => {
  if (resource.mimeType !== RESOURCE_MIME_TYPE) {
    throw new Error(`the resource is ${resource.mimeType}, not ${RESOURCE_MIME_TYPE}`);
  }
  const csp = resource._meta?.ui?.csp ?? {};

  // The frame goes into the page first, still about:blank, so its window exists for the
  // transport: a frame's WindowProxy stays the same object when it navigates, so messages from
  // the sandbox page it loads later still match `event.source`.
  const frame = document.createElement('iframe');
  frame.id = 'view';
  frame.title = 'MCP App view';
  // The sandbox page has an origin of its own (another host name and port), so same-origin here
  // only lets it keep that origin: it never shares ours. It cannot navigate this page.
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  if (resource._meta?.ui?.prefersBorder === false) frame.style.border = 'none';
  document.getElementById('frame-box').replaceChildren(frame);

  const bridge = new AppBridge(
    null, // no MCP client here: tool calls are forwarded by hand below
    HOST_INFO,
    // What we offer the view: forwarded tool calls and its log lines. Nothing else (no links,
    // no messages to the model, no context updates), so a view that asks for those is refused.
    { serverTools: {}, logging: {}, sandbox: { csp } },
    {
      hostContext: {
        toolInfo: { tool },
        theme: 'light',
        displayMode: 'inline',
        availableDisplayModes: ['inline'],
        containerDimensions: { maxHeight: MAX_HEIGHT, width: frame.clientWidth || 800 },
        locale: 'en-US',
        platform: 'web',
      },
    },
  );
  // With a null client AppBridge installs no tools/call handler of its own; this is the one.
  bridge.oncalltool = (params) => window.hostCallTool({ name: params.name, arguments: params.arguments ?? {} });
  bridge.onloggingmessage = (params) => seen.logs.push(params);
  bridge.onsizechange = ({ height }) => {
    if (typeof height !== 'number') return;
    seen.sizes.push(height);
    frame.style.height = `${Math.min(Math.max(height, 80), MAX_HEIGHT)}px`;
  };
  bridge.onerror = (error) => seen.errors.push(String(error?.message ?? error));
  const sandboxReady = new Promise((resolve) => {
    bridge.onsandboxready = () => resolve();
  });
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => {
      seen.initialized = true;
      resolve();
    };
  });

  // Both ends of the transport are the frame's window: it only accepts what that window posts.
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));

  // The sandbox page's CSP header is built from the resource's CSP, which it reads from its URL.
  const url = new URL(sandboxUrl);
  url.searchParams.set('csp', JSON.stringify(csp));
  status('loading the sandbox');
  frame.src = url.href;
  await sandboxReady;

  status('sending the view');
  await bridge.sendSandboxResourceReady({ html: resource.text, csp });
  await initialized;

  // As a client does once the call it shows has ended: its arguments, then its result.
  await bridge.sendToolInput({ arguments: toolInput });
  await bridge.sendToolResult(toolResult);
  status(`showing ${tool.name}(${JSON.stringify(toolInput)})`);
  window.hostBridge = bridge;
};
