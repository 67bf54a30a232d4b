// Pads as resources through the official TypeScript client, in both eras: the rustpad://{id}
// template and a read marked as data in its own text. Errors and the tool filter are in
// tests/python/test_resources.py.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { UNTRUSTED_PREAMBLE, inEachMode, padId, useRustpad } from './harness.mjs';

describe('resources', () => {
  const rustpad = useRustpad();

  inEachMode(rustpad, (mode, session) => {

      it('lists the pad template and reads a pad as data', async () => {
        const id = padId(`resource-${mode}`);
        await rustpad.seed(id, { text: 'a pad\n' });
        const { resourceTemplates } = await session.client.listResourceTemplates();
        assert.deepEqual(
          resourceTemplates.map((t) => t.uriTemplate),
          ['rustpad://{id}'],
        );
        const { contents } = await session.client.readResource({ uri: `rustpad://${id}` });
        // A pad this client read is listed, newest first (docs/resources.md).
        const { resources } = await session.client.listResources();
        assert.equal(resources[0].uri, `rustpad://${id}`);
        assert.equal(resources[0].name, id);
        assert.equal(contents.length, 1);
        assert.equal(contents[0].uri, `rustpad://${id}`);
        assert.ok(contents[0].text.startsWith(UNTRUSTED_PREAMBLE), contents[0].text);
        assert.ok(contents[0].text.endsWith('\n\na pad\n'));
      });
  });
});
