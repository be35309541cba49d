// Test helper: the Helix MCP server over a real Host in this process, with the SDK's real Client
// connected through the SDK's in-memory transport pair: MCP without a child process or stdio,
// for tests whose point is the protocol, not the process (those use test/fixtures/mcp/serve.ts).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createHost, type Host, type HostOptions } from '../../host/5-host/host.js';
import { createMcpServer, type HelixMcpServer, type McpServerOptions } from '../../host/6-faces/mcp/server.js';

/** A connected client, the server, and the host behind it. */
export interface MemoryServed {
  readonly host: Host;
  readonly mcp: HelixMcpServer;
  readonly client: Client;
  /** Closes the client, the server and the host. */
  close(): Promise<void>;
}

/** What serveInMemory takes besides the host's options. */
export interface MemoryServeOptions {
  readonly server?: McpServerOptions;
  /** The host the server sees, e.g. one that records its calls; default the host itself. */
  readonly serve?: (host: Host) => Host;
}

/** Creates a host, an MCP server over it, and a client connected in memory. */
export async function serveInMemory(hostOptions: HostOptions, options: MemoryServeOptions = {}): Promise<MemoryServed> {
  const host = await createHost(hostOptions);
  try {
    const mcp = createMcpServer(options.serve?.(host) ?? host, options.server);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    const client = new Client({ name: 'helix-test', version: '1.0.0' });
    await client.connect(clientSide);
    return {
      host,
      mcp,
      client,
      async close() {
        await client.close();
        await mcp.close();
        await host.close();
      },
    };
  } catch (err) {
    await host.close();
    throw err;
  }
}
