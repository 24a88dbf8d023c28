/** Set a gateway_meta value (params: key, value, updated_at), as Store.setMeta does and procedures do in theirs. */
export const META_UPSERT =
  'INSERT INTO gateway_meta (key, value, updated_at) VALUES (?, ?, ?) ' +
  'ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at';
