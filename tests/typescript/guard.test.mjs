// The confirmation guard through the official TypeScript client, in both
// eras: set_document on a non-empty pad and replace_in_document over more
// than one match ask a person first. On 2025-11-25 the server pushes
// `elicitation/create` inside the call; on 2026-07-28 it answers
// `input_required` and the client fulfils it through the same
// `elicitation/create` handler and retries. A client without the elicitation
// capability gets the two-call token instead.
//
// Tampered, expired and replayed states and forged tokens are raw-wire cases,
// covered in tests/host-tests/tests/guard.rs.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { EXPECTED_ERA, MODES, openClient, padId, useRustpad, textOf } from './harness.mjs';

const MARKER = 'SECRET-MARKER-1234';
const HEADING = 'Values below are supplied by the caller, not by this server:';
const TOKEN = /confirm_token="([0-9a-f]{64})"/g;

/** The lines under the caller-values heading. */
function callerLines(message) {
  const at = message.indexOf(`${HEADING}\n`);
  assert.notEqual(at, -1, message);
  return message.slice(at + HEADING.length + 1).split('\n');
}

function tokenIn(text) {
  const tokens = [...text.matchAll(TOKEN)].map((match) => match[1]);
  assert.equal(tokens.length, 1, text);
  return tokens[0];
}

const ACCEPT = { action: 'accept', content: { confirm: true } };
const DECLINE = { action: 'decline' };

describe('confirmation guard', () => {
  const rustpad = useRustpad();

  for (const mode of MODES) {
    describe(`${mode} mode, a client that can show a dialog`, () => {
      let client;
      /** Every elicitation/create request the client received, oldest first. */
      const asked = [];
      let answer = ACCEPT;
      before(async () => {
        ({ client } = await openClient(mode, { rustpadUrl: rustpad.url }));
        assert.equal(client.getProtocolEra(), EXPECTED_ERA[mode]);
        client.setRequestHandler('elicitation/create', async (request) => {
          asked.push(request.params);
          return answer;
        });
      });
      after(async () => {
        await client?.close();
      });

      const call = (name, args) => client.callTool({ name, arguments: args });
      const answering = (next) => {
        answer = next;
        asked.length = 0;
      };

      it('accept replaces every occurrence after asking once', async () => {
        const id = padId(`guard-accept-${mode}`);
        await rustpad.seed(id, { text: 'one a\ntwo a\nthree a' });
        answering(ACCEPT);
        const result = await call('replace_in_document', { id, search: 'a', replace: 'b', replace_all: true });
        assert.notEqual(result.isError, true, textOf(result));
        assert.equal(result.structuredContent.replacements, 3);
        assert.equal(asked.length, 1);
        assert.equal(await rustpad.text(id), 'one b\ntwo b\nthree b');
      });

      it('accept replaces a non-empty pad with set_document', async () => {
        const id = padId(`guard-set-accept-${mode}`);
        await rustpad.seed(id, { text: 'old content' });
        answering(ACCEPT);
        const result = await call('set_document', { id, text: 'new' });
        assert.notEqual(result.isError, true, textOf(result));
        assert.equal(result.structuredContent.changed, true);
        assert.equal(asked.length, 1);
        assert.equal(await rustpad.text(id), 'new');
      });

      it('decline leaves the pad unchanged and says so', async () => {
        for (const [tool, args] of [
          ['replace_in_document', { search: 'a', replace: 'b', replace_all: true }],
          ['set_document', { text: 'new' }],
        ]) {
          const id = padId(`guard-decline-${mode}`);
          await rustpad.seed(id, { text: 'a a a' });
          answering(DECLINE);
          const result = await call(tool, { id, ...args });
          assert.equal(result.isError, true, tool);
          assert.equal(textOf(result), `rustpad-mcp: not confirmed (the person declined). Pad "${id}" was not changed.`);
          assert.equal(asked.length, 1, tool);
          assert.equal(await rustpad.text(id), 'a a a', tool);
        }
      });

      it('the dialog shows counts and the labelled caller values, never pad content', async () => {
        const id = padId(`guard-dialog-${mode}`);
        await rustpad.seed(id, { text: `${MARKER} a a a` });
        answering(DECLINE);
        await call('replace_in_document', { id, search: 'a', replace: 'z', replace_all: true });
        assert.equal(asked.length, 1);
        const [params] = asked;
        assert.ok(params.message.startsWith(`This will replace 3 occurrences in pad "${id}".`), params.message);
        assert.deepEqual(callerLines(params.message), ['  Search: a', '  Replace with: z']);
        assert.ok(!JSON.stringify(params).includes(MARKER), JSON.stringify(params));
        assert.deepEqual(Object.keys(params.requestedSchema.properties), ['confirm']);
        assert.equal(params.requestedSchema.properties.confirm.type, 'boolean');
        assert.deepEqual(params.requestedSchema.required, ['confirm']);

        const other = padId(`guard-dialog-set-${mode}`);
        const old = `${MARKER} a a a`;
        await rustpad.seed(other, { text: old });
        answering(DECLINE);
        await call('set_document', { id: other, text: 'short' });
        assert.equal(asked.length, 1);
        assert.ok(asked[0].message.includes(`(${[...old].length} characters)`), asked[0].message);
        assert.ok(asked[0].message.includes('(5 characters)'), asked[0].message);
        assert.ok(!JSON.stringify(asked[0]).includes(MARKER));
        assert.equal(await rustpad.text(other), old);
      });

      it('a single match, append, create and set_language never ask', async () => {
        const id = padId(`guard-quiet-${mode}`);
        answering(DECLINE);
        for (const [tool, args] of [
          ['create_document', { id, text: 'only one a here' }],
          ['replace_in_document', { id, search: 'one', replace: '1', replace_all: true }],
          ['append_to_document', { id, text: '!' }],
          ['set_language', { id, language: 'markdown' }],
          ['set_document', { id: padId(`guard-empty-${mode}`), text: 'fresh' }],
        ]) {
          const result = await call(tool, args);
          assert.notEqual(result.isError, true, `${tool}: ${textOf(result)}`);
        }
        assert.equal(asked.length, 0);
        assert.equal(await rustpad.text(id), 'only 1 a here!');
      });
    });

    describe(`${mode} mode, a client without the elicitation capability`, () => {
      let client;
      before(async () => {
        ({ client } = await openClient(mode, { rustpadUrl: rustpad.url, capabilities: {} }));
        assert.equal(client.getProtocolEra(), EXPECTED_ERA[mode]);
      });
      after(async () => {
        await client?.close();
      });

      it('gets a token, and the second call with it executes once', async () => {
        const id = padId(`guard-token-${mode}`);
        await rustpad.seed(id, { text: 'a b a b a' });
        const args = { id, search: 'a', replace: 'c', replace_all: true };
        const offer = await client.callTool({ name: 'replace_in_document', arguments: args });
        assert.equal(offer.isError, true);
        const text = textOf(offer);
        assert.ok(text.startsWith(`This will replace 3 occurrences in pad "${id}".`), text);
        assert.ok(text.includes('cannot show a confirmation dialog'), text);
        assert.ok(text.includes('only that the call was made twice with the same arguments'), text);
        const token = tokenIn(text);
        assert.equal(await rustpad.text(id), 'a b a b a');

        const done = await client.callTool({ name: 'replace_in_document', arguments: { ...args, confirm_token: token } });
        assert.notEqual(done.isError, true, textOf(done));
        assert.equal(done.structuredContent.replacements, 3);
        assert.equal(await rustpad.text(id), 'c b c b c');

        // A person sets the pad back: the pad's history still shows the token's use.
        await rustpad.setByPerson(id, 'a b a b a');
        const again = await client.callTool({ name: 'replace_in_document', arguments: { ...args, confirm_token: token } });
        assert.equal(again.isError, true);
        assert.match(textOf(again), /already used/);
        assert.equal(await rustpad.text(id), 'a b a b a');
      });
    });
  }
});
