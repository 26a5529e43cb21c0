/**
 * A Node agent using hindsight-redis through the official MCP TypeScript SDK: the
 * streamable HTTP endpoint, a bearer token, the memory tools, a resource and the
 * recall prompt. Prints one JSON line per step ({"step": ..., "value": ...}).
 *
 *   export HINDSIGHT_MCP_URL=http://127.0.0.1:8765/mcp
 *   export HINDSIGHT_TOKEN=$(hindsight-redis token create --agent-id ts-agent)
 *   npm ci && npm run build && npm start -- "a fact to remember" "a question about it"
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.HINDSIGHT_MCP_URL ?? "http://127.0.0.1:8765/mcp");
const token = process.env.HINDSIGHT_TOKEN;
if (!token) {
  console.error("set HINDSIGHT_TOKEN to a token of `hindsight-redis token create`");
  process.exit(2);
}
const fact = process.argv[2] ?? "The TypeScript agent builds with Node 20 and tsc 5.9";
const question = process.argv[3] ?? "Which Node version does the TypeScript agent use?";

type CallResult = Awaited<ReturnType<Client["callTool"]>>;

/** A tool's JSON result: its structured content (a list comes as {result: [...]}), else its text. */
function data(result: CallResult): any {
  const text = Array.isArray(result.content) && result.content[0]?.type === "text"
    ? result.content[0].text
    : "";
  if (result.isError) {
    throw new Error(`tool error: ${text}`); // says what was wrong and whether to retry
  }
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  if (structured) {
    const keys = Object.keys(structured);
    return keys.length === 1 && keys[0] === "result" ? structured.result : structured;
  }
  return JSON.parse(text);
}

function show(step: string, value: unknown): void {
  console.log(JSON.stringify({ step, value }));
}

// The token fixes who this agent is (namespace, agent id, scope) on every request.
const transport = new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "hindsight-ts-agent", version: "0.1.0" });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  show("tools", tools.map((t) => t.name));

  const written = data(
    await client.callTool({
      name: "memory_write",
      arguments: { content: fact, tags: ["lang:typescript"], wait: true },
    }),
  );
  show("write", written); // {id, status: "indexed", ...} once searchable (wait: true)

  const hits = data(
    await client.callTool({
      name: "memory_search",
      arguments: { query: question, max_tokens: 200 },
    }),
  );
  show("search", hits);

  // memory://<namespace>/<id>: the namespace is the token's; the stats resource names it.
  const { resources } = await client.listResources();
  const stats = resources.find((r) => r.name === "stats");
  if (!stats) throw new Error("the server lists no stats resource");
  const base = stats.uri.slice(0, -"/stats".length);
  const read = await client.readResource({ uri: `${base}/${written.id}` });
  const [content] = read.contents;
  if (!("text" in content)) throw new Error("expected a JSON text resource");
  show("resource", JSON.parse(content.text));

  // What to put in the model's context before working on a task, within a token budget.
  const prompt = await client.getPrompt({
    name: "recall",
    arguments: { task: question, max_tokens: "300" },
  });
  const [message] = prompt.messages;
  show("recall", message.content.type === "text" ? message.content.text : "");
} finally {
  await client.close();
}
