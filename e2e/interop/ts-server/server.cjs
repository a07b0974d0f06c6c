// ts-server: a small MCP server on the official TypeScript SDK
// (@modelcontextprotocol/sdk), for mcp-call's interop tests. Run it with
// NODE_PATH pointing at the node_modules that setup-node.sh filled.
//
// Tools: shout(text string) → the text upper-cased; divide(a, b number) →
// structuredContent {"quotient": a/b}, or an isError result when b is 0.
// It logs notifications to stderr only: stdout is the protocol.
"use strict";

const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const server = new McpServer({ name: "ts-server", version: "1.0.0" });

server.registerTool(
  "shout",
  { description: "Upper-case a text.", inputSchema: { text: z.string().describe("The text to shout.") } },
  async ({ text }) => ({ content: [{ type: "text", text: text.toUpperCase() }] }),
);

server.registerTool(
  "divide",
  {
    description: "Divide a by b.",
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { quotient: z.number() },
  },
  async ({ a, b }) => {
    if (b === 0) {
      return { content: [{ type: "text", text: "division by zero" }], isError: true };
    }
    const out = { quotient: a / b };
    return { content: [{ type: "text", text: JSON.stringify(out) }], structuredContent: out };
  },
);

server.connect(new StdioServerTransport()).catch((err) => {
  console.error("ts-server:", err);
  process.exit(1);
});
