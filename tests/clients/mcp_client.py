"""The official `mcp` SDK against the agent's MCP server, as a host would use it. Run by
tests/integration/mcp.rs once over stdio (the SDK starts `crowdvision-agent mcp`) and once over
Streamable HTTP (`serve` at /mcp). Every check is an assert; the last line printed is JSON the
Rust test reads.

    python mcp_client.py SETTINGS_JSON

SETTINGS_JSON: {"transport": "stdio", "command", "args", "env", "cwd"} or
{"transport": "http", "url", "token"}; both with "secret" (a word only staff documents hold)
and "public" (a word of a public document).

With "rounds": N (HTTP only) the client instead keeps one connection for N rounds of three tool
calls and an `ask` every `ask_every` rounds, each of which must be answered. After round
`pause_after` it prints "PAUSED" and waits for a line on standard input (the test stops a
replica there), then goes on.
"""
import asyncio
import json
import sys

import httpx2
import mcp_types
from mcp import Client, MCPError, StdioServerParameters

settings = json.loads(sys.argv[1])
EXPECTED = {
    "search_docs", "list_buildings", "get_building", "get_room", "get_occupancy",
    "list_sensors", "get_latest_sensor_data", "get_sensor_history", "ask",
}


def server():
    if settings["transport"] == "stdio":
        return StdioServerParameters(
            command=settings["command"], args=settings["args"], env=settings["env"],
            cwd=settings["cwd"],
        )
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(
        headers={"Authorization": "Bearer " + settings["token"]}, timeout=60
    )
    return streamable_http_client(settings["url"], http_client=http)


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


async def main():
    report = {}
    async with Client(server(), read_timeout_seconds=60) as client:
        # Nine tools, each with its JSON schema.
        tools = (await client.list_tools()).tools
        names = {tool.name for tool in tools}
        assert names == EXPECTED, names
        for tool in tools:
            assert tool.input_schema["type"] == "object", tool
            assert tool.description, tool
            # Every tool declares what its structured content holds; the SDK checks each
            # result below against it.
            assert tool.output_schema and tool.output_schema["type"] == "object", tool
        by_name = {tool.name: tool for tool in tools}
        assert "building_id" in by_name["get_occupancy"].input_schema["required"]
        assert by_name["ask"].input_schema["required"] == ["question"]
        report["tools"] = sorted(names)

        # Live data for a building of the caller's domain.
        hq = await client.call_tool("get_occupancy", {"building_id": "acme-hq"})
        assert not hq.is_error, text_of(hq)
        assert "acme-hq" in text_of(hq), text_of(hq)
        report["occupancy"] = hq.structured_content

        # Another domain's building answers exactly like one that does not exist.
        foreign = await client.call_tool("get_building", {"building_id": "globex-tower"})
        unknown = await client.call_tool("get_building", {"building_id": "no-such-place"})
        assert foreign.is_error and unknown.is_error
        assert text_of(foreign) == text_of(unknown), (text_of(foreign), text_of(unknown))
        assert foreign.structured_content == unknown.structured_content
        assert "globex" not in text_of(foreign).lower()
        report["unknown_building"] = text_of(unknown)

        # search_docs: the public passage, never the staff one.
        public = await client.call_tool("search_docs", {"query": settings["public"]})
        assert not public.is_error, text_of(public)
        assert settings["public"] in text_of(public), text_of(public)
        secret = await client.call_tool("search_docs", {"query": settings["secret"]})
        assert settings["secret"] not in text_of(secret), text_of(secret)

        # ask: the whole agent, a cited answer.
        asked = await client.call_tool("ask", {"question": "Where is the zebra display?"})
        assert not asked.is_error, text_of(asked)
        answer = text_of(asked)
        assert "zebra display is in the lobby" in answer, answer
        assert "\n[^" in answer and " › " in answer, answer
        assert asked.structured_content["citations"], asked.structured_content
        report["answer"] = answer

        # Prompts: three, filled in as asked; building ids complete from the caller's own
        # buildings (an Acme caller sees no Globex id), and a missing argument is refused.
        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["room-status", "co2-report", "explain-setting"], prompts
        report_prompt = await client.get_prompt(
            "co2-report", {"building_id": "acme-hq", "room_id": "hq-201"}
        )
        prompt_text = report_prompt.messages[0].content.text
        assert "hq-201" in prompt_text and "24 hours" in prompt_text, prompt_text
        assert "`ask` tool" in prompt_text, prompt_text
        completed = await client.complete(
            mcp_types.PromptReference(type="ref/prompt", name="room-status"),
            {"name": "building_id", "value": "ac"},
        )
        ids = completed.completion.values
        assert ids and all(i.startswith("ac") for i in ids), ids
        everything = await client.complete(
            mcp_types.PromptReference(type="ref/prompt", name="room-status"),
            {"name": "building_id", "value": ""},
        )
        assert not any(i.startswith("globex") for i in everything.completion.values), everything
        report["completed"] = sorted(ids)
        try:
            await client.get_prompt("room-status", {"building_id": "acme-hq"})
            raise AssertionError("a prompt without its room was rendered")
        except MCPError as error:
            assert error.code == -32602, (error.code, error.message)

        # Resources: the pages the caller may read, each readable; a page the caller may not
        # see and one that does not exist are refused alike.
        pages = (await client.list_resources()).resources
        names = [page.name for page in pages]
        assert any(name.endswith("open.md") for name in names), names
        assert not any("staff" in name for name in names), names
        open_page = next(page for page in pages if page.name.endswith("open.md"))
        assert open_page.mime_type == "text/markdown", open_page
        read = await client.read_resource(open_page.uri)
        assert "zebra display stands in the lobby" in read.contents[0].text, read
        report["pages"] = sorted(names)
        refusals = []
        for uri in [
            open_page.uri.replace("open.md", "staff.md"),
            open_page.uri.replace("open.md", "nothing-here.md"),
            "crowdvision://buildings/globex-tower",
            "crowdvision://buildings/no-such-place",
            "crowdvision://buildings/acme-hq/rooms/no-such-room",
            "file:///etc/passwd",
        ]:
            try:
                await client.read_resource(uri)
                raise AssertionError("read: " + uri)
            except MCPError as error:
                # -32602 on protocol 2026-07-28 and later (-32002 before it).
                assert error.code == -32602, (uri, error.code, error.message)
                assert settings["secret"] not in error.message, error.message
                refusals.append(error.message.replace(uri, "URI"))
        assert len(set(refusals)) == 1, refusals
        report["refusal"] = refusals[0]

        # Templates: a building and a room of the caller's domain, read through the live tools.
        templates = (await client.list_resource_templates()).resource_templates
        assert sorted(t.uri_template for t in templates) == [
            "crowdvision://buildings/{building_id}",
            "crowdvision://buildings/{building_id}/rooms/{room_id}",
        ], templates
        building = json.loads(
            (await client.read_resource("crowdvision://buildings/acme-hq")).contents[0].text
        )
        assert building["id"] == "acme-hq" and building["rooms"], building
        room = json.loads(
            (await client.read_resource("crowdvision://buildings/acme-hq/rooms/hq-201"))
            .contents[0].text
        )
        assert room["room"]["id"] == "hq-201", room

        # Bad input: an unknown tool is a protocol error; arguments of the wrong type are the
        # tool's error result; neither runs anything.
        try:
            await client.call_tool("drop_tables", {})
            raise AssertionError("an unknown tool was accepted")
        except MCPError as error:
            assert error.code == -32602, (error.code, error.message)
            assert "unknown tool" in error.message, error.message
        wrong = await client.call_tool("get_occupancy", {"building_id": 42})
        assert wrong.is_error and "invalid arguments" in text_of(wrong), text_of(wrong)
        wrong_ask = await client.call_tool("ask", {"question": ["not", "text"]})
        assert wrong_ask.is_error and "invalid arguments" in text_of(wrong_ask)
        missing = await client.call_tool("get_room", {})
        assert missing.is_error, text_of(missing)
    print(json.dumps(report))


async def rounds():
    report = {"tools": 0, "asks": 0}
    async with Client(server(), read_timeout_seconds=60) as client:
        assert len((await client.list_tools()).tools) == len(EXPECTED)
        for n in range(settings["rounds"]):
            if n == settings.get("pause_after"):
                print("PAUSED", flush=True)
                sys.stdin.readline()
            for name, arguments, expected in [
                ("list_buildings", {}, "acme-hq"),
                ("get_occupancy", {"building_id": "acme-hq"}, "acme-hq"),
                ("search_docs", {"query": settings["public"]}, settings["public"]),
            ]:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (n, name, text_of(result))
                assert expected in text_of(result), (n, name, text_of(result))
                report["tools"] += 1
            if n % settings["ask_every"] == 0:
                asked = await client.call_tool("ask", {"question": "Where is the zebra display?"})
                assert not asked.is_error, (n, text_of(asked))
                assert asked.structured_content["citations"], asked.structured_content
                report["asks"] += 1
    print(json.dumps(report))


asyncio.run(rounds() if "rounds" in settings else main())
