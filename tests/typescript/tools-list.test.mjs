// tools/list in both eras: the eleven tools in catalogue order, their titles,
// all four annotation hints exactly as each tool's file in guest/src/tools/ sets
// them, and object input/output schemas.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { MODES, useRustpad, withClient } from './harness.mjs';

/** [name, title, readOnly, destructive, idempotent, openWorld, input required, output required] */
const CATALOGUE = [
  ['get_document', 'Read a pad', true, false, true, false, ['id'], ['untrusted', 'source', 'id', 'text']],
  [
    'get_document_info',
    'Inspect a pad',
    true,
    false,
    true,
    false,
    ['id'],
    ['untrusted', 'source', 'id', 'url', 'length_characters', 'revision', 'language', 'active_users', 'note'],
  ],
  [
    'get_stats',
    'Rustpad server statistics',
    true,
    false,
    true,
    false,
    [],
    ['start_time', 'start_time_iso', 'num_documents', 'database_size'],
  ],
  [
    'get_changes',
    'What changed in a pad since you read it',
    true,
    false,
    true,
    false,
    ['id', 'base'],
    [
      'untrusted',
      'source',
      'id',
      'since_revision',
      'revision',
      'base',
      'changed',
      'operations',
      'authors',
      'diff',
      'diff_cut',
      'too_different',
    ],
  ],
  ['create_document', 'Create a pad', false, false, true, false, [], ['id', 'url', 'characters', 'note', 'created']],
  [
    'set_document',
    "Replace a pad's content",
    false,
    true,
    true,
    false,
    ['id', 'text'],
    ['id', 'url', 'characters', 'note', 'changed', 'characters_before'],
  ],
  [
    'append_to_document',
    'Append to a pad',
    false,
    false,
    false,
    false,
    ['id', 'text'],
    ['id', 'url', 'characters', 'note', 'appended_characters'],
  ],
  [
    'replace_in_document',
    'Find and replace in a pad',
    false,
    true,
    false,
    false,
    ['id', 'search', 'replace'],
    ['id', 'url', 'characters', 'note', 'replacements'],
  ],
  [
    'edit_document',
    'Edit a pad where you read it',
    false,
    true,
    false,
    false,
    ['id', 'edits'],
    [
      'id',
      'url',
      'characters',
      'note',
      'untrusted',
      'source',
      'revision',
      'base',
      'dry_run',
      'edits',
      'diff',
      'diff_cut',
    ],
  ],
  [
    'set_language',
    "Set a pad's editor language",
    false,
    false,
    true,
    false,
    ['id', 'language'],
    ['id', 'url', 'characters', 'note', 'language'],
  ],
  [
    'wait_for_changes',
    'Wait for people to change a pad',
    true,
    false,
    true,
    false,
    ['id', 'base'],
    [
      'untrusted',
      'source',
      'id',
      'since_revision',
      'revision',
      'base',
      'changed',
      'operations',
      'authors',
      'diff',
      'diff_cut',
      'too_different',
      'timed_out',
      'waited_ms',
    ],
  ],
];

describe('tools/list', () => {
  const rustpad = useRustpad();

  for (const mode of MODES) {
    describe(`${mode} mode`, () => {
      let tools;
      before(async () => {
        tools = await withClient(mode, rustpad.url, async (client) => (await client.listTools()).tools);
      });

      it('lists all 9 tools in catalogue order', () => {
        assert.deepEqual(
          tools.map((tool) => tool.name),
          CATALOGUE.map(([name]) => name),
        );
      });

      for (const [name, title, readOnly, destructive, idempotent, openWorld, inputRequired, outputRequired] of CATALOGUE) {
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
