/**
 * Which PostgreSQL server processes serve a given set of client processes: their TCP connections to the server (from
 * /proc: the processes' socket inodes, matched in /proc/net/tcp{,6} to local ports) looked up in pg_stat_activity by
 * client_port. The server's CPU for one gateway can then be read apart from every other session's on a shared server.
 */
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { Client } from 'pg';

/** Socket inodes the processes hold open. */
function socketInodes(pids: number[]): Set<string> {
  const out = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) out.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  }
  return out;
}

/** Local ports of those sockets' TCP connections to `port`. */
function localPortsTo(inodes: Set<string>, port: number): number[] {
  const out: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[] = [];
    try {
      lines = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9])) continue;
      const [, local] = f[1].split(':');
      const [, remote] = f[2].split(':');
      if (parseInt(remote, 16) === port) out.push(parseInt(local, 16));
    }
  }
  return out;
}

/** The server pids of the sessions that `pids` hold with the server at `url`. */
export async function postgresSessionPids(url: string, pids: number[]): Promise<number[]> {
  const ports = localPortsTo(socketInodes(pids), Number(new URL(url).port || 5432));
  if (ports.length === 0) return [];
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[])', [
      ports,
    ]);
    return r.rows.map((x) => x.pid);
  } finally {
    await c.end();
  }
}

/**
 * How many of some sessions were, on average, waiting for a row another transaction holds (a heavyweight lock),
 * waiting for the write-ahead log to be written and flushed (their commit's, or another's that they queue behind),
 * working (on a core, or on other I/O), or waiting for their client (inside a transaction, for the gateway's next
 * statement).
 */
export interface SessionStates {
  lock: number;
  wal: number;
  working: number;
  client: number;
}

/** A sample's wait event, as SessionStates counts it. */
function stateOf(type: string | null, event: string | null): keyof SessionStates {
  if (type === 'Lock') return 'lock';
  if (type === 'Client') return 'client';
  if ((type === 'LWLock' || type === 'IO') && event !== null && event.startsWith('WAL')) return 'wal';
  return 'working';
}

/**
 * Sample the states of the sessions `pids` every 20 ms until `until` settles (pg_stat_activity, one connection of
 * the bench's own); idle sessions count in none.
 */
export async function sampleSessions(url: string, pids: number[], until: Promise<unknown>): Promise<SessionStates> {
  const c = new Client({ connectionString: url });
  await c.connect();
  let done = false;
  void until.finally(() => (done = true));
  const sum: SessionStates = { lock: 0, wal: 0, working: 0, client: 0 };
  let n = 0;
  try {
    while (!done) {
      const r = await c.query<{ t: string | null; e: string | null }>(
        'SELECT wait_event_type AS t, wait_event AS e FROM pg_stat_activity ' +
          "WHERE pid = ANY($1::int[]) AND state <> 'idle'",
        [pids],
      );
      for (const { t, e } of r.rows) sum[stateOf(t, e)]++;
      n++;
      await new Promise((res) => setTimeout(res, 20));
    }
  } finally {
    await c.end();
  }
  const d = Math.max(1, n);
  return { lock: sum.lock / d, wal: sum.wal / d, working: sum.working / d, client: sum.client / d };
}

/** What some sessions sent the server, counted from its log (each statement logged: log_min_duration_statement=0). */
export interface SentStatements {
  /** Messages that ran statements: a round trip each (a simple query, or an extended query's execute). */
  messages: number;
  /** Statements, BEGIN and COMMIT among them (a simple query's several each counted). */
  statements: number;
}

/**
 * Count what the sessions `pids` sent while `during` runs, from the entries the server's log (at `logPath`) gains
 * meanwhile: one "statement:" entry per simple query, its statements as many as Db.rounds joined with ";\n" (a
 * literal holding ";\n" would count one more), and one "execute" entry per extended query.
 */
export async function countStatements(
  logPath: string,
  pids: number[],
  during: Promise<unknown>,
): Promise<SentStatements> {
  const from = statSync(logPath).size;
  await during;
  await new Promise((r) => setTimeout(r, 300)); // the server writes its log a little after it answers
  const entries = readFileSync(logPath, 'utf8')
    .slice(from)
    .split(/\n(?=\d{4}-\d\d-\d\d )/);
  const own = new Set(pids.map((p) => `[${p}]`));
  const out = { messages: 0, statements: 0 };
  for (const entry of entries) {
    const m = /^[^[]*(\[\d+\]).*? duration: [\d.]+ ms {2}(statement|execute [^:]*): /.exec(entry);
    if (!m || !own.has(m[1])) continue;
    out.messages++;
    out.statements += m[2] === 'statement' ? entry.split(';\n').length : 1;
  }
  return out;
}
