// A call that ends without the answer to its dialog withdraws the dialog:
// the official TypeScript client cancels a call while its person is asked,
// and the server's `notifications/cancelled` for its own elicitation/create
// reaches the client's handler (its signal aborts), on stdio and over HTTP.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { openClient, padId, startHttpServer, useRustpad } from './harness.mjs';

/** Resolves once `signal` aborts, with a hang guard. */
function aborted(signal) {
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error('the dialog was never withdrawn')), 60_000);
    signal.addEventListener('abort', () => {
      clearTimeout(guard);
      resolve(true);
    });
  });
}

/** Calls set_document, cancels it once the dialog is shown, and waits for the withdrawal. */
async function cancelOnceAsked(client, id) {
  let withdrawn;
  const asked = new Promise((resolveAsked) => {
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      withdrawn = aborted(ctx.mcpReq.signal);
      resolveAsked();
      await withdrawn;
      return { action: 'cancel' };
    });
  });
  const controller = new AbortController();
  const call = client
    .callTool({ name: 'set_document', arguments: { id, text: 'written' } }, { signal: controller.signal })
    .catch((error) => error);
  await asked;
  controller.abort();
  await call;
  assert.equal(await withdrawn, true);
}

describe('a dialog withdrawn when its call is cancelled', () => {
  const rustpad = useRustpad();

  it('on stdio', async () => {
    const id = padId('withdraw-stdio');
    await rustpad.seed(id, { text: 'kept' });
    const { client } = await openClient('legacy', { rustpadUrl: rustpad.url });
    try {
      await cancelOnceAsked(client, id);
    } finally {
      await client.close();
    }
    assert.equal(await rustpad.text(id), 'kept');
  });

  describe('over HTTP', () => {
    let server;
    before(async () => {
      server = await startHttpServer(rustpad.url);
    });
    after(async () => {
      await server?.stop();
    });

    it('in a 2025-11-25 session', async () => {
      const id = padId('withdraw-http');
      await rustpad.seed(id, { text: 'kept' });
      const client = new Client(
        { name: 'rustpad-mcp-e2e-withdraw', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'legacy' } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      try {
        await cancelOnceAsked(client, id);
      } finally {
        await client.close();
      }
      assert.equal(await rustpad.text(id), 'kept');
    });
  });
});
