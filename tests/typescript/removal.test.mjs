// The removal rule through the official TypeScript client, in both eras: a
// replace asks a person when it would remove more than half of a pad (or more
// than 10,000 characters), counting what the same server process removed from
// that pad in the last 15 minutes. Without it, one single-match replace could
// empty a pad and an unguarded set_document could then fill it.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { MODES, openClient, padId, useRustpad, textOf } from './harness.mjs';

const ACCEPT = { action: 'accept', content: { confirm: true } };
const DECLINE = { action: 'decline' };
const TOKEN = /confirm_token="([0-9a-f]{64})"/;

describe('removal guard', () => {
  const rustpad = useRustpad();

  for (const mode of MODES) {
    describe(`${mode} mode, a client that can show a dialog`, () => {
      let client;
      const asked = [];
      let answer = DECLINE;
      before(async () => {
        ({ client } = await openClient(mode, { rustpadUrl: rustpad.url }));
        client.setRequestHandler('elicitation/create', async (request) => {
          asked.push(request.params);
          return answer;
        });
      });
      after(async () => {
        await client?.close();
      });
      const replace = (id, search, replacement) =>
        client.callTool({ name: 'replace_in_document', arguments: { id, search, replace: replacement } });
      const answering = (next) => {
        answer = next;
        asked.length = 0;
      };

      for (const [label, old, search, replacement, after] of [
        ['a whole pad by nothing', 'ONE TWO THREE', 'ONE TWO THREE', '', ''],
        ['most of a pad by unrelated text', 'Agenda: budget review.', 'budget review.', 'nothing at all here', 'Agenda: nothing at all here'],
      ]) {
        it(`a single match removing ${label} asks; declined the pad is byte-identical`, async () => {
          const id = padId(`removal-decline-${mode}`);
          await rustpad.seed(id, { text: old });
          answering(DECLINE);
          const result = await replace(id, search, replacement);
          assert.equal(result.isError, true);
          assert.equal(textOf(result), `rustpad-mcp: not confirmed (the person declined). Pad "${id}" was not changed.`);
          assert.equal(asked.length, 1);
          assert.ok(asked[0].message.startsWith(`This will replace 1 occurrence in pad "${id}".`), asked[0].message);
          assert.ok(asked[0].message.includes(`of the pad's ${old.length} characters.`), asked[0].message);
          assert.equal(await rustpad.text(id), old);
        });

        it(`a single match removing ${label} changes the pad once approved`, async () => {
          const id = padId(`removal-accept-${mode}`);
          await rustpad.seed(id, { text: old });
          answering(ACCEPT);
          const result = await replace(id, search, replacement);
          assert.notEqual(result.isError, true, textOf(result));
          assert.equal(asked.length, 1);
          assert.equal(await rustpad.text(id), after);
        });
      }

      it('fixes ask nobody', async () => {
        const short = padId(`removal-fix-${mode}`);
        const long = padId(`removal-long-${mode}`);
        await rustpad.seed(short, { text: 'Hello. Teh cat sat on a mat.!!' });
        await rustpad.seed(long, { text: 'All work and no play. '.repeat(300) + 'Hello wrold.' });
        answering(DECLINE);
        assert.notEqual((await replace(short, 'Teh cat sat on a mat.', 'The cat sat on the mat.')).isError, true);
        assert.notEqual((await replace(long, 'wrold', 'world')).isError, true);
        assert.equal(asked.length, 0);
        assert.equal(await rustpad.text(short), 'Hello. The cat sat on the mat.!!');
      });

      it('two removals of 40 % of the same pad ask on the second', async () => {
        const id = padId(`removal-twice-${mode}`);
        const rest = 'b'.repeat(24) + 'c'.repeat(36);
        await rustpad.seed(id, { text: 'a'.repeat(40) + rest });
        answering(DECLINE);
        assert.notEqual((await replace(id, 'a'.repeat(40), '')).isError, true);
        assert.equal(asked.length, 0);
        const second = await replace(id, 'b'.repeat(24), '');
        assert.equal(second.isError, true);
        assert.equal(asked.length, 1);
        assert.ok(asked[0].message.includes('64 characters would be gone, of the 100'), asked[0].message);
        assert.equal(await rustpad.text(id), rest);
      });
    });

    describe(`${mode} mode, a client that cannot show a dialog`, () => {
      let client;
      before(async () => {
        ({ client } = await openClient(mode, { rustpadUrl: rustpad.url, capabilities: {} }));
      });
      after(async () => {
        await client?.close();
      });

      it('a single match removing the whole pad takes the token, which then works', async () => {
        const id = padId(`removal-token-${mode}`);
        await rustpad.seed(id, { text: 'ONE TWO THREE' });
        const args = { id, search: 'ONE TWO THREE', replace: '' };
        const offer = await client.callTool({ name: 'replace_in_document', arguments: args });
        assert.equal(offer.isError, true);
        const token = TOKEN.exec(textOf(offer))?.[1];
        assert.ok(token, textOf(offer));
        assert.equal(await rustpad.text(id), 'ONE TWO THREE');
        const done = await client.callTool({ name: 'replace_in_document', arguments: { ...args, confirm_token: token } });
        assert.notEqual(done.isError, true, textOf(done));
        assert.equal(await rustpad.text(id), '');
      });
    });
  }
});
