/**
 * `${VAR}` and `${VAR:-default}` interpolation, applied to every string scalar of the
 * parsed YAML (never to keys), so a secret with YAML-special characters stays one value.
 * `$${` writes a literal `${`. An unset variable without a default is a config error.
 */
const PATTERN = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export interface InterpolationProblem {
  pointer: string;
  message: string;
}

export function interpolate(
  value: unknown,
  env: NodeJS.ProcessEnv,
  pointer = '',
  problems: InterpolationProblem[] = [],
): unknown {
  if (typeof value === 'string') {
    return value.replace(PATTERN, (whole, escaped: string, name: string, fallback: string | undefined) => {
      if (escaped) return whole.slice(1);
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      problems.push({ pointer: pointer || '/', message: `environment variable ${name} is not set and has no default` });
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, `${pointer}/${i}`, problems));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = interpolate(v, env, `${pointer}/${escapePointer(k)}`, problems);
    return out;
  }
  return value;
}

export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
