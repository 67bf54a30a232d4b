"""tools/list: every tool in catalogue order, their annotations and their schemas, the same
in both eras."""

from __future__ import annotations

import pytest

from catalogue import BY_NAME, TOOLS
from conftest import ALL_TOOLS, ERAS

pytestmark = pytest.mark.anyio


# What the docs and the shipped schemas say (catalogue.py): the server must list exactly that.
HINTS = {tool.name: tool.hints for tool in TOOLS}
REQUIRED_INPUTS = {tool.name: tool.input_required for tool in TOOLS}
REQUIRED_OUTPUTS = {tool.name: tool.output_required for tool in TOOLS}

WRITE_RESULT_FIELDS = {"id", "url", "characters", "note"}


@pytest.fixture(params=ERAS)
async def tools(request, open_client):
    async with open_client(request.param) as client:
        listing = await client.list_tools()
        assert listing.next_cursor is None
        yield listing.tools


async def test_nine_tools_in_catalogue_order(tools):
    assert [tool.name for tool in tools] == ALL_TOOLS


async def test_every_tool_declares_all_four_hints_with_the_catalogue_values(tools):
    for tool in tools:
        annotations = tool.annotations
        assert annotations is not None, tool.name
        declared = (
            annotations.read_only_hint,
            annotations.destructive_hint,
            annotations.idempotent_hint,
            annotations.open_world_hint,
        )
        assert declared == HINTS[tool.name], tool.name
        assert tool.title == BY_NAME[tool.name].title, tool.name
        assert tool.description, tool.name


async def test_input_schemas_are_closed_objects(tools):
    for tool in tools:
        schema = tool.input_schema
        assert schema["type"] == "object", tool.name
        assert schema["additionalProperties"] is False, tool.name
        assert isinstance(schema.get("properties"), dict), tool.name
        assert sorted(schema.get("required", [])) == sorted(REQUIRED_INPUTS[tool.name]), tool.name
        for name in schema.get("required", []):
            assert name in schema["properties"], (tool.name, name)
    by_name = {tool.name: tool for tool in tools}
    assert by_name["get_stats"].input_schema["properties"] == {}
    id_schema = by_name["get_document"].input_schema["properties"]["id"]
    assert id_schema["type"] == "string"
    assert id_schema["maxLength"] == 100
    assert id_schema["pattern"] == "^[A-Za-z0-9._-]+$"
    text_schema = by_name["append_to_document"].input_schema["properties"]["text"]
    assert text_schema["maxLength"] == 262_144
    assert text_schema["minLength"] == 1
    replace_all = by_name["replace_in_document"].input_schema["properties"]["replace_all"]
    assert replace_all["type"] == "boolean"


async def test_output_schemas_are_closed_objects(tools):
    for tool in tools:
        schema = tool.output_schema
        assert schema is not None, tool.name
        assert schema["type"] == "object", tool.name
        assert schema["additionalProperties"] is False, tool.name
        assert sorted(schema.get("required", [])) == sorted(REQUIRED_OUTPUTS[tool.name]), tool.name
        for name in schema.get("required", []):
            assert name in schema["properties"], (tool.name, name)
        untrusted = "untrusted" in schema["properties"]
        # Exactly the tools that relay pad content mark it untrusted.
        relays = ("get_document", "get_document_info", "get_changes", "edit_document", "wait_for_changes", "revert_changes")
        assert untrusted == (tool.name in relays), tool.name
        if untrusted:
            assert schema["properties"]["untrusted"] == {"const": True}
            assert schema["properties"]["source"] == {"const": "rustpad"}
            assert {"untrusted", "source", "id"} <= set(schema["required"])
        if not HINTS[tool.name][0]:
            assert WRITE_RESULT_FIELDS <= set(schema["required"]), tool.name
    by_name = {tool.name: tool for tool in tools}
    document = by_name["get_document"].output_schema["properties"]
    whole, window = document["truncated"]["anyOf"]
    assert whole["required"] == ["shown", "total"]
    assert window == {"type": "boolean"}
    assert document["empty"] == {"const": True}
    stats = by_name["get_stats"].output_schema
    assert set(stats["required"]) == {
        "start_time",
        "start_time_iso",
        "num_documents",
        "database_size",
    }


@pytest.mark.parametrize("mode", ERAS)
async def test_prompts_are_empty_pads_are_a_template_and_logging_is_accepted(open_client, mode):
    async with open_client(mode) as client:
        capabilities = client.server_capabilities
        assert capabilities.prompts is not None and capabilities.resources is not None
        assert (await client.list_prompts()).prompts == []
        assert (await client.list_resources()).resources == []
        templates = (await client.list_resource_templates()).resource_templates
        assert [template.uri_template for template in templates] == ["rustpad://{id}"]
        if mode == "legacy":
            await client.set_logging_level("debug")
