import { readFileSync, statSync } from 'node:fs';

/** A process under load: where to send chat requests and what to send with them. */
export interface Target {
  name: string;
  url: string;
  pid: number;
  headers: Record<string, string>;
  /** The gateway's SQLite file, if any. */
  db?: string;
  plugins?: string[];
}

/** Resident set size of a process, MB. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Bytes of a SQLite file and its WAL. */
export function dbBytes(db: string): number {
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return size(db) + size(`${db}-wal`);
}

/** CPU time (user + system) a process has used so far, ms (from /proc, in clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** CPU time of a process's main thread (its event loop) so far, ms: the rest is its worker and V8's threads. */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuMs(path: string): number {
  const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
