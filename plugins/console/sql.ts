/** `WHERE a AND b ...` for the conditions given, or nothing when there are none. */
export function whereSql(conditions: readonly string[]): string {
  return conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
}
