import type { Db, PresetConfig } from '../../../src/plugin';

/** The admin API's presets in the store (routing_presets). */
export class PresetRepo {
  constructor(private readonly db: Db) {}

  async all(): Promise<PresetConfig[]> {
    const rows = await this.db.all<{ body: string }>('SELECT body FROM routing_presets ORDER BY name');
    return rows.map((r) => JSON.parse(r.body) as PresetConfig);
  }

  async get(name: string): Promise<PresetConfig | undefined> {
    const r = await this.db.get<{ body: string }>('SELECT body FROM routing_presets WHERE name = ?', [name]);
    return r ? (JSON.parse(r.body) as PresetConfig) : undefined;
  }

  async put(p: PresetConfig): Promise<void> {
    await this.db.run(
      'INSERT INTO routing_presets (name, body, updated_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at',
      [p.name, JSON.stringify(p), Date.now()],
    );
  }

  async delete(name: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM routing_presets WHERE name = ?', [name])).changes > 0;
  }
}
