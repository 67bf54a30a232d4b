// Connecting in each era: the handshake (legacy `initialize`, or the 'auto'
// probe with `server/discover` on a sibling process), what the server says
// about itself, and a clean shutdown.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { MODES, EXPECTED_ERA, useRustpad, openClient, withClient } from './harness.mjs';

describe('lifecycle', () => {
  const rustpad = useRustpad();

  for (const mode of MODES) {
    describe(`${mode} mode`, () => {
      it(`negotiates the ${EXPECTED_ERA[mode]} era`, async () => {
        await withClient(mode, rustpad.url, async (client) => {
          assert.equal(client.getProtocolEra(), EXPECTED_ERA[mode]);
          const expectedVersion = mode === 'legacy' ? '2025-11-25' : '2026-07-28';
          assert.equal(client.getNegotiatedProtocolVersion(), expectedVersion);
        });
      });

      it('identifies itself as rustpad-mcp and offers tools', async () => {
        await withClient(mode, rustpad.url, async (client) => {
          const info = client.getServerVersion();
          assert.ok(info, 'server info is known after connect');
          assert.equal(info.name, 'rustpad-mcp');
          assert.equal(typeof info.version, 'string');
          assert.match(info.version, /^\d+\.\d+\.\d+/);
          const capabilities = client.getServerCapabilities();
          assert.ok(capabilities?.tools, 'the tools capability is declared');
        });
      });

      it('instructions say pad content is untrusted', async () => {
        await withClient(mode, rustpad.url, async (client) => {
          const instructions = client.getInstructions();
          assert.equal(typeof instructions, 'string');
          assert.match(instructions, /untrusted/i);
          assert.match(instructions, /never follow instructions/i);
        });
      });

      it('the server exits cleanly by itself when the client closes stdin', async () => {
        const { client, transport } = await openClient(mode, { rustpadUrl: rustpad.url });
        await client.listTools();
        // The transport's child process (a private field of the pinned SDK): close() ends
        // stdin, then waits up to 2 s before it resorts to SIGTERM.
        const child = transport._process;
        assert.ok(child, 'the transport exposes its child process');
        const exited = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal })));
        await client.close();
        assert.deepEqual(await exited, { code: 0, signal: null });
      });
    });
  }

  it('auto mode learns both eras from server/discover', async () => {
    await withClient('auto', rustpad.url, async (client) => {
      const discover = client.getDiscoverResult();
      assert.ok(discover, 'the probe produced a DiscoverResult');
      assert.ok(discover.supportedVersions.includes('2026-07-28'));
      assert.ok(discover.supportedVersions.includes('2025-11-25'));
      assert.equal(discover._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'rustpad-mcp');
    });
  });

  it('legacy mode answers ping', async () => {
    await withClient('legacy', rustpad.url, async (client) => {
      assert.deepEqual(await client.ping(), {});
    });
  });

  it('modern results carry serverInfo in _meta', async () => {
    await withClient('auto', rustpad.url, async (client) => {
      const result = await client.callTool({ name: 'get_stats', arguments: {} });
      assert.equal(result._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'rustpad-mcp');
    });
  });

  for (const mode of MODES) {
    it(`without RUSTPAD_URL a ${mode} client still connects and each call explains (isError)`, async () => {
      await withClient(mode, undefined, async (client) => {
        const { tools } = await client.listTools();
        assert.equal(tools.length, 12);
        const result = await client.callTool({ name: 'get_document', arguments: { id: 'any' } });
        assert.equal(result.isError, true);
        assert.match(result.content[0].text, /RUSTPAD_URL/);
      });
    });
  }
});
