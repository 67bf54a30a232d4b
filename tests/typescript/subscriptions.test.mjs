// Subscriptions through the official TypeScript client in 2025-11-25 (its default era): a
// person's edit reaches the client as notifications/resources/updated, this server's own write
// does not, and unsubscribing stops them. The 2026-07-28 listen, caps and clean-up are in
// tests/python/test_subscriptions.py.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { openClient, padId, useRustpad } from './harness.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('subscriptions (2025-11-25)', () => {
  const rustpad = useRustpad();
  const session = {};
  const updates = [];

  before(async () => {
    ({ client: session.client } = await openClient('legacy', { rustpadUrl: rustpad.url }));
    session.client.setNotificationHandler('notifications/resources/updated', (notification) => {
      updates.push(notification.params.uri);
    });
  });
  after(async () => {
    await session.client?.close();
  });

  const nextUpdate = async (count) => {
    for (let waited = 0; waited < 10_000; waited += 50) {
      if (updates.length > count) return updates[count];
      await sleep(50);
    }
    assert.fail('no update within 10 s of the edit');
  };

  it("hears a person's edit, not its own write, until it unsubscribes", async () => {
    const id = padId('subscribe');
    const uri = `rustpad://${id}`;
    await rustpad.seed(id, { text: 'start\n' });
    assert.equal(session.client.getServerCapabilities().resources.subscribe, true);
    const ana = await rustpad.person(id, 'Ana');
    try {
      await session.client.subscribeResource({ uri });
      await ana.sees((line) => line.server?.UserCursor && line.server.UserCursor.id !== ana.identity);
      const result = await session.client.callTool({
        name: 'append_to_document',
        arguments: { id, text: 'ours\n' },
      });
      assert.notEqual(result.isError, true);
      await sleep(2_500);
      assert.deepEqual(updates, [], 'our own write was reported');
      await ana.append('theirs\n');
      assert.equal(await nextUpdate(0), uri);
      const { contents } = await session.client.readResource({ uri });
      assert.ok(contents[0].text.endsWith('\n\nstart\nours\ntheirs\n'), contents[0].text);
      await session.client.unsubscribeResource({ uri });
      const heard = updates.length;
      await ana.append('more\n');
      await sleep(2_500);
      assert.equal(updates.length, heard, 'an update came after unsubscribing');
    } finally {
      await ana.leave();
    }
  });
});
