// rustpad-mcp --http through the official TypeScript client's Streamable HTTP
// transport: 2025-11-25 (a session; the confirmation dialog arrives on the
// call's event stream) and 2026-07-28 (stateless; input_required and a retry).
// The wire-level rules of the transport are pinned in tests/python/test_http*.py.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { padId, startHttpServer, textOf, useRustpad } from './harness.mjs';

const TOKEN = 'a-bearer-token-that-is-long-enough-0123456789';
const ERAS = [
  { label: '2025-11-25', mode: 'legacy', era: 'legacy' },
  { label: '2026-07-28', mode: { pin: '2026-07-28' }, era: 'modern' },
];

async function connect(url, mode, headers = {}) {
  const client = new Client(
    { name: 'rustpad-mcp-e2e-http', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } },
  );
  const asked = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { confirm: true } };
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport, asked };
}

describe('Streamable HTTP', () => {
  const rustpad = useRustpad();
  let server;
  before(async () => {
    server = await startHttpServer(rustpad.url, { RUSTPAD_MCP_HTTP_TOKEN: TOKEN });
  });
  after(async () => {
    await server?.stop();
  });

  for (const { label, mode, era } of ERAS) {
    it(`${label}: reads, writes and confirms through the HTTP transport`, async () => {
      const { client, transport, asked } = await connect(server.url, mode, {
        Authorization: `Bearer ${TOKEN}`,
      });
      try {
        assert.equal(client.getProtocolEra(), era);
        const id = padId(`http-${era}`);
        await rustpad.seed(id, { text: 'a-b-a' });
        const read = await client.callTool({ name: 'get_document', arguments: { id } });
        assert.equal(read.structuredContent.text, 'a-b-a');
        const replaced = await client.callTool({
          name: 'replace_in_document',
          arguments: { id, search: 'a', replace: 'c', replace_all: true },
        });
        assert.notEqual(replaced.isError, true, textOf(replaced));
        assert.equal(replaced.structuredContent.replacements, 2);
        assert.equal(asked.length, 1);
        assert.match(asked[0], /^This will replace 2 occurrences in pad /);
        assert.equal(await rustpad.text(id), 'c-b-c');
        if (era === 'legacy') {
          // The session ends on request, and is gone afterwards.
          await transport.terminateSession();
          assert.equal(transport.sessionId, undefined);
        }
      } finally {
        await client.close();
      }
    });
  }

  it("2026-07-28: a listen the client closes ends quietly on both sides", async () => {
    const { client } = await connect(server.url, { pin: '2026-07-28' }, {
      Authorization: `Bearer ${TOKEN}`,
    });
    const errors = [];
    client.onerror = (error) => errors.push(error);
    try {
      const id = padId('listen-close');
      await rustpad.seed(id, { text: 'watched\n' });
      const updates = [];
      client.setNotificationHandler('notifications/resources/updated', (notification) => {
        updates.push(notification.params.uri);
      });
      const subscription = await client.listen({ resourceSubscriptions: [`rustpad://${id}`] });
      assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, [`rustpad://${id}`]);
      await rustpad.setByPerson(id, 'watched\nand changed\n');
      for (let waited = 0; updates.length === 0 && waited < 10_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.deepEqual(updates, [`rustpad://${id}`]);
      // Closing aborts the stream and posts notifications/cancelled without Mcp-Method.
      await subscription.close();
      assert.equal(await subscription.closed, 'local');
      // The server is still there for the next request, and nobody reported an error.
      const read = await client.callTool({ name: 'get_document', arguments: { id } });
      assert.equal(read.structuredContent.text, 'watched\nand changed\n');
      assert.deepEqual(errors, []);
    } finally {
      await client.close();
    }
    assert.deepEqual(errors, []);
  });

  it('refuses a client without the bearer token', async () => {
    await assert.rejects(connect(server.url, { pin: '2026-07-28' }), /401|Unauthorized/);
  });
});
