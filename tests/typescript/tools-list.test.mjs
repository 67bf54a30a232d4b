// tools/list in both eras: every tool in catalogue order, its title, all four
// annotation hints and its input and output schemas' required fields, exactly as
// docs/tools.md and the shipped schemas say (catalogue.mjs).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { TOOLS } from './catalogue.mjs';
import { MODES, useRustpad, withClient } from './harness.mjs';

describe('tools/list', () => {
  const rustpad = useRustpad();

  for (const mode of MODES) {
    describe(`${mode} mode`, () => {
      let tools;
      before(async () => {
        tools = await withClient(mode, rustpad.url, async (client) => (await client.listTools()).tools);
      });

      it('lists every tool in catalogue order', () => {
        assert.deepEqual(
          tools.map((tool) => tool.name),
          TOOLS.map(({ name }) => name),
        );
      });

      for (const { name, title, readOnly, destructive, idempotent, openWorld, inputRequired, outputRequired } of TOOLS) {
        describe(name, () => {
          const tool = () => tools.find((t) => t.name === name);

          it('has its title and a description', () => {
            assert.equal(tool().title, title);
            assert.equal(typeof tool().description, 'string');
            assert.ok(tool().description.length > 20);
          });

          it('carries all four hints exactly as the catalogue sets them', () => {
            assert.deepEqual(tool().annotations, {
              title,
              readOnlyHint: readOnly,
              destructiveHint: destructive,
              idempotentHint: idempotent,
              openWorldHint: openWorld,
            });
          });

          it('has a closed object input schema', () => {
            const schema = tool().inputSchema;
            assert.equal(schema.type, 'object');
            assert.equal(schema.additionalProperties, false);
            assert.equal(typeof schema.properties, 'object');
            assert.deepEqual([...(schema.required ?? [])].sort(), [...inputRequired].sort());
            for (const required of inputRequired) {
              assert.ok(required in schema.properties, `${required} is described`);
            }
          });

          it('has a closed object output schema', () => {
            const schema = tool().outputSchema;
            assert.ok(schema, 'an output schema is declared');
            assert.equal(schema.type, 'object');
            assert.equal(schema.additionalProperties, false);
            assert.deepEqual([...schema.required].sort(), [...outputRequired].sort());
            for (const required of outputRequired) {
              assert.ok(required in schema.properties, `${required} is described`);
            }
          });
        });
      }

      it('the read tools are read-only and the guarded tools are destructive', () => {
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
        for (const name of ['get_document', 'get_document_info', 'get_stats', 'get_changes', 'wait_for_changes']) {
          assert.equal(byName[name].annotations.readOnlyHint, true, name);
        }
        for (const name of ['set_document', 'replace_in_document', 'edit_document']) {
          assert.equal(byName[name].annotations.destructiveHint, true, name);
        }
      });
    });
  }

  it('both eras list identical tool definitions', async () => {
    const [legacy, modern] = await Promise.all(
      MODES.map((mode) => withClient(mode, rustpad.url, async (client) => (await client.listTools()).tools)),
    );
    assert.deepEqual(legacy, modern);
  });
});
