/**
 * @module
 * A subset of gitleaks' rules, vendored: the rules whose tokens carry a vendor prefix or a fixed shape (so a prose
 * text rarely matches by chance), converted from Go RE2 to JavaScript by hand. Not edited beyond the conversion; to
 * update, take the new config/gitleaks.toml and convert the same way (see docs/reference/guardrails.md).
 *
 * Source: https://github.com/gitleaks/gitleaks, config/gitleaks.toml at commit
 * b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b (2026-07-22, minVersion v8.25.0).
 *
 * Conversion: Go's inline `(?i)` at the start became the `i` flag; an inline `(?i)`, `(?i:...)` or `(?-i:...)` in the
 * middle (JavaScript in Node 20 has no inline modifiers) became explicit character classes (`[a-z]` -> `[a-zA-Z]`,
 * `telegr` -> `[Tt][Ee][Ll][Ee][Gg][Rr]`); `\b`, `\w`, `\s` and `$` mean the same in both (ASCII, no multi-line).
 * The secret is capture group 1 where the rule has one (gitleaks takes the first group), else the whole match;
 * `entropy` is the rule's minimum Shannon entropy of the secret; `allow` its allowlist regexes on the secret.
 *
 * gitleaks is under the MIT License:
 *
 * Copyright (c) 2019 Zachary Rice
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated
 * documentation files (the "Software"), to deal in the Software without restriction, including without limitation
 * the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
 * permit persons to whom the Software is furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all copies or substantial portions of
 * the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO
 * THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT,
 * TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 * SOFTWARE.
 */
/* eslint-disable no-useless-escape -- the patterns are kept as gitleaks writes them, escapes included */

export interface SecretRule {
  /** gitleaks' rule id. */
  id: string;
  regex: RegExp;
  /** Lower case; the rule runs only when one occurs in the lower-cased text. */
  keywords: readonly string[];
  entropy?: number;
  allow?: readonly RegExp[];
}

/** gitleaks' end of a token: a quote, a space, a semicolon, an escaped newline, or the end. */
export const GITLEAKS_RULES: readonly SecretRule[] = [
  {
    id: 'age-secret-key',
    regex: /AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}/g,
    keywords: ['age-secret-key-1'],
  },
  {
    id: 'anthropic-admin-api-key',
    regex: /\b(sk-ant-admin01-[a-zA-Z0-9_\-]{93}AA)(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['sk-ant-admin01'],
  },
  {
    id: 'anthropic-api-key',
    regex: /\b(sk-ant-api03-[a-zA-Z0-9_\-]{93}AA)(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['sk-ant-api03'],
  },
  {
    id: 'aws-access-token',
    regex: /\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b/g,
    keywords: ['a3t', 'akia', 'asia', 'abia', 'acca'],
    entropy: 3,
    allow: [/.+EXAMPLE$/],
  },
  {
    id: 'databricks-api-token',
    regex: /\b(dapi[a-f0-9]{32}(?:-\d)?)(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['dapi'],
    entropy: 3,
  },
  {
    id: 'digitalocean-pat',
    regex: /\b(dop_v1_[a-f0-9]{64})(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['dop_v1_'],
    entropy: 3,
  },
  { id: 'doppler-api-token', regex: /dp\.pt\.[a-zA-Z0-9]{43}/g, keywords: ['dp.pt.'], entropy: 2 },
  {
    id: 'gcp-api-key',
    regex: /\b(AIza[\w-]{35})(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['aiza'],
    entropy: 4,
    allow: [/AIzaSyabcdefghijklmnopqrstuvwxyz1234567/],
  },
  { id: 'github-app-token', regex: /(?:ghu|ghs)_[0-9a-zA-Z]{36}/g, keywords: ['ghu_', 'ghs_'], entropy: 3 },
  { id: 'github-fine-grained-pat', regex: /github_pat_\w{82}/g, keywords: ['github_pat_'], entropy: 3 },
  { id: 'github-oauth', regex: /gho_[0-9a-zA-Z]{36}/g, keywords: ['gho_'], entropy: 3 },
  { id: 'github-pat', regex: /ghp_[0-9a-zA-Z]{36}/g, keywords: ['ghp_'], entropy: 3 },
  { id: 'github-refresh-token', regex: /ghr_[0-9a-zA-Z]{36}/g, keywords: ['ghr_'], entropy: 3 },
  { id: 'gitlab-pat', regex: /glpat-[\w-]{20}/g, keywords: ['glpat-'], entropy: 3 },
  {
    id: 'grafana-service-account-token',
    regex: /\b(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})(?:[\x60'"\s;]|\\[nr]|$)/gi,
    keywords: ['glsa_'],
    entropy: 3,
  },
  {
    id: 'hashicorp-tf-api-token',
    regex: /[a-zA-Z0-9]{14}\.atlasv1\.[a-zA-Z0-9\-_=]{60,70}/g,
    keywords: ['atlasv1'],
    entropy: 3.5,
  },
  {
    id: 'huggingface-access-token',
    regex: /\b(hf_[a-zA-Z]{34})(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['hf_'],
    entropy: 2,
  },
  {
    id: 'jwt',
    regex:
      /\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['ey'],
    entropy: 3,
  },
  { id: 'linear-api-key', regex: /lin_api_[a-zA-Z0-9]{40}/g, keywords: ['lin_api_'], entropy: 2 },
  {
    id: 'mailgun-private-api-token',
    regex:
      /[\w.-]{0,50}?(?:mailgun)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(key-[a-f0-9]{32})(?:[\x60'"\s;]|\\[nr]|$)/gi,
    keywords: ['mailgun'],
  },
  {
    id: 'npm-access-token',
    regex: /\b(npm_[a-z0-9]{36})(?:[\x60'"\s;]|\\[nr]|$)/gi,
    keywords: ['npm_'],
    entropy: 2,
  },
  {
    id: 'openai-api-key',
    regex:
      /\b(sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['t3blbkfj'],
    entropy: 3,
  },
  {
    id: 'perplexity-api-key',
    regex: /\b(pplx-[a-zA-Z0-9]{48})(?:[\x60'"\s;]|\\[nr]|$|\b)/g,
    keywords: ['pplx-'],
    entropy: 4,
  },
  {
    id: 'postman-api-token',
    regex: /\b(PMAK-[a-fA-F0-9]{24}\-[a-fA-F0-9]{34})(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['pmak-'],
    entropy: 3,
  },
  {
    id: 'private-key',
    regex: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----/gi,
    keywords: ['-----begin'],
  },
  {
    id: 'pypi-upload-token',
    regex: /pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}/g,
    keywords: ['pypi-ageichlwas5vcmc'],
    entropy: 3,
  },
  {
    id: 'sendgrid-api-token',
    regex: /\b(SG\.[a-zA-Z0-9=_\-\.]{66})(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['sg.'],
    entropy: 2,
  },
  {
    id: 'sendinblue-api-token',
    regex: /\b(xkeysib-[a-f0-9]{64}\-[a-zA-Z0-9]{16})(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['xkeysib-'],
    entropy: 2,
  },
  { id: 'shopify-access-token', regex: /shpat_[a-fA-F0-9]{32}/g, keywords: ['shpat_'], entropy: 2 },
  { id: 'slack-app-token', regex: /xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+/gi, keywords: ['xapp'], entropy: 2 },
  { id: 'slack-bot-token', regex: /xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*/g, keywords: ['xoxb'], entropy: 3 },
  {
    id: 'slack-user-token',
    regex: /xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}/g,
    keywords: ['xoxp-', 'xoxe-'],
    entropy: 2,
  },
  {
    id: 'slack-webhook-url',
    regex: /(?:https?:\/\/)?hooks.slack.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+\/]{43,56}/g,
    keywords: ['hooks.slack.com'],
  },
  {
    id: 'stripe-access-token',
    regex: /\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['sk_test', 'sk_live', 'sk_prod', 'rk_test', 'rk_live', 'rk_prod'],
    entropy: 2,
  },
  {
    id: 'telegram-bot-api-token',
    regex:
      /[\w.-]{0,50}?(?:[Tt][Ee][Ll][Ee][Gg][Rr])(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([0-9]{5,16}:A[a-zA-Z0-9_\-]{34})(?:[\x60'"\s;]|\\[nr]|$)/g,
    keywords: ['telegr'],
  },
  { id: 'twilio-api-key', regex: /SK[0-9a-fA-F]{32}/g, keywords: ['sk'], entropy: 3 },
];
