import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** The repository's files: tracked, and new ones not ignored (so that a doc is checked before its first commit). */
function repoFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return [...new Set(out.split('\n').filter((f) => f !== ''))].filter((f) => existsSync(join(ROOT, f))).sort();
}

const isMarkdown = (f: string) => f.endsWith('.md');
const isYaml = (f: string) => f.endsWith('.yaml') || f.endsWith('.yml');

/** Markdown without its code: fenced blocks and inline code spans hold examples, not links. */
function withoutCode(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Every link target in a Markdown text: `[x](target "title")`, `![x](target)` and `[x]: target` definitions. */
export function markdownTargets(text: string): string[] {
  const prose = withoutCode(text);
  const inline = [...prose.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+["'(][^)]*)?\)/g)].map((m) => m[1]);
  const defined = [...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/gm)].map((m) => m[1]);
  return [...inline, ...defined].map((t) => t.replace(/^<|>$/g, ''));
}

/** Paths into the repository named in YAML comments: Markdown links, and bare `docs/...` or `plugins/...` paths. */
export function yamlCommentTargets(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split('\n')) {
    const comment = /(?:^|\s)#(.*)$/.exec(line)?.[1];
    if (comment === undefined) continue;
    found.push(...markdownTargets(comment));
    for (const m of comment.matchAll(/(?:^|[\s(`'"])((?:docs|plugins)\/[\w./-]*[\w/])/g)) found.push(`/${m[1]}`);
  }
  return found;
}

/** Where a link goes inside the repository, or undefined for what is not a file link (a URL, an anchor here). */
export function linkedPath(fromFile: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//') || target.startsWith('#')) return undefined;
  const path = decodeURI(target.replace(/[?#].*$/, ''));
  if (path === '') return undefined;
  return path.startsWith('/') ? join(ROOT, path) : resolve(ROOT, dirname(fromFile), path);
}

/** Every link in one file's text that leaves the repository or names a file that does not exist. */
export function brokenLinks(file: string, text: string): string[] {
  const broken: string[] = [];
  for (const target of isMarkdown(file) ? markdownTargets(text) : yamlCommentTargets(text)) {
    const path = linkedPath(file, target);
    if (path === undefined) continue;
    const inside = relative(ROOT, path);
    if (inside.startsWith('..') || isAbsolute(inside)) broken.push(`${file}: ${target} (outside the repository)`);
    else if (!existsSync(path)) broken.push(`${file}: ${target} (no such file)`);
  }
  return broken;
}

describe('docs: links and the README', () => {
  const files = repoFiles();
  const docs = files.filter((f) => isMarkdown(f) || isYaml(f));

  it('finds the Markdown and YAML files to check', () => {
    expect(docs).to.include.members(['README.md', 'gateway.yaml', 'docs/architecture.md', 'CONTRIBUTING.md']);
  });

  it('every relative link in a Markdown or YAML file names a file that exists in the repository', () => {
    expect(docs.flatMap((f) => brokenLinks(f, readFileSync(join(ROOT, f), 'utf8')))).to.deep.equal([]);
  });

  it('reports a missing file, a bare path in a YAML comment and a link out of the repository', () => {
    const md =
      'See [a](docs/nope.md#part), [b](README.md "t"), `[c](in/code.md)`, [d](https://x.example/e.md), [e](#f).\n';
    expect(brokenLinks('nowhere/a.md', md + '[g]: ../../shared/DESIGN.md\n')).to.deep.equal([
      'nowhere/a.md: docs/nope.md#part (no such file)',
      'nowhere/a.md: README.md (no such file)',
      'nowhere/a.md: ../../shared/DESIGN.md (outside the repository)',
    ]);
    expect(brokenLinks('README.md', md)).to.deep.equal(['README.md: docs/nope.md#part (no such file)']);
    const yaml =
      'server:\n  port: 8080 # docs/limits.md has them; see plugins/auth/README.md.\n  host: x # not/a/path\n';
    expect(brokenLinks('gateway.yaml', yaml)).to.deep.equal(['gateway.yaml: /docs/limits.md (no such file)']);
    expect(linkedPath('docs/guides/a.md', '../../README.md#two-commands')).to.equal(join(ROOT, 'README.md'));
  });

  it('README.md is the user\'s: at most 300 lines and no bench "sitting"', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).to.be.at.most(300);
    expect(readme).to.not.match(/sitting/i);
  });

  it('no Markdown file points at ../shared (the design lives in docs/architecture.md)', () => {
    const outside = files.filter(isMarkdown).filter((f) => readFileSync(join(ROOT, f), 'utf8').includes('../shared'));
    expect(outside).to.deep.equal([]);
  });
});
