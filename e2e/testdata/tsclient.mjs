// tsclient.mjs: the official TypeScript MCP client (v2) against
// `oo-claude doorman --mcp`, for TestOfficialClients:
//
//   node tsclient.mjs <dir with node_modules> <mode> <oo-claude> [args...]
//
// mode is a revision (2024-11-05 … 2025-11-25 through initialize,
// 2026-07-28 pinned through server/discover) or "auto". It connects,
// lists the tools, calls claude_inbox_status, calls it with an argument its
// inputSchema forbids (which must be refused), pings (before 2026-07-28,
// which has no ping) and closes, then prints one JSON line: the negotiated
// version, the tool names, the call's state and the refusal.
import { createRequire } from "node:module";

const [dir, mode, bin, ...args] = process.argv.slice(2);
const require = createRequire(dir + "/package.json");
const { Client } = require("@modelcontextprotocol/client");
const { StdioClientTransport } = require("@modelcontextprotocol/client/stdio");

const opts = { capabilities: {} };
if (mode === "auto") {
  opts.versionNegotiation = { mode: "auto" };
} else if (mode >= "2026-07-28") {
  opts.versionNegotiation = { mode: { pin: mode } };
} else {
  opts.supportedProtocolVersions = [mode];
}
const client = new Client({ name: "oo-claude-e2e", version: "1" }, opts);
const transport = new StdioClientTransport({ command: bin, args, env: process.env, stderr: "inherit" });
await client.connect(transport);
const out = { version: client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null };
const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name);
const res = await client.callTool({ name: "claude_inbox_status", arguments: {} });
out.isError = !!res.isError;
out.state = res.structuredContent?.state ?? null;
let refused = null;
try {
  const bad = await client.callTool({ name: "claude_inbox_status", arguments: { verbose: true } });
  refused = bad.isError ? "isError" : null;
} catch (e) {
  refused = "error: " + (e?.message ?? String(e));
}
out.refused = refused;
if (mode !== "auto" && mode < "2026-07-28") {
  await client.ping();
  out.ping = true;
}
await client.close();
console.log(JSON.stringify(out));
