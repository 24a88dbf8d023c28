import type { Migration } from '../../../src/plugin';

/** The mcp plugin's tables: its call log and the allowlists set through its admin API (module `mcp`). */
export const mcpMigrations: Migration[] = [
  {
    module: 'mcp',
    version: 1,
    description: 'MCP tool calls and the allowlists of keys and accounts',
    up: `
      CREATE TABLE mcp_calls (
        id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        key_hash TEXT,
        account_id TEXT,
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        duration_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        error_code TEXT,
        cost BIGINT NOT NULL DEFAULT 0,
        request_id TEXT,
        arguments TEXT,
        result TEXT
      );
      CREATE INDEX mcp_calls_created ON mcp_calls (created_at);
      CREATE INDEX mcp_calls_key ON mcp_calls (key_hash, created_at);
      CREATE TABLE mcp_access (
        subject TEXT NOT NULL,
        subject_id TEXT NOT NULL,
        patterns TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (subject, subject_id)
      );
    `,
  },
];
