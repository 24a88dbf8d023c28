/** The consent page: server-rendered HTML, no build step, no script. Every value is escaped. */
const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

export interface ConsentView {
  site: string;
  callbackUrl: string;
  challenge: string;
  method: string;
  /** The anti-CSRF token, also set as a SameSite=Strict cookie (double submit). */
  csrf: string;
  error?: string;
}

/** The page's CSS, inline (the page's Content-Security-Policy allows inline styles only). */
const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:30rem;margin:3rem auto;padding:0 1rem;color:#222}\n' +
  'h1{font-size:1.4rem}.site{font-weight:600}label{display:block;margin:1rem 0 .3rem}' +
  'input[type=password],input[type=number]{width:100%;padding:.5rem;box-sizing:border-box}\n' +
  '.actions{display:flex;gap:1rem;margin-top:1.5rem}button{padding:.6rem 1.2rem;font-size:1rem}.error{color:#b00020}';

export function consentPage(v: ConsentView): string {
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${esc(value)}">`;
  const fields =
    hidden('callback_url', v.callbackUrl) +
    hidden('code_challenge', v.challenge) +
    hidden('code_challenge_method', v.method) +
    hidden('csrf', v.csrf);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize ${esc(v.site)}</title>
<style>${STYLE}</style></head>
<body><main>
<h1>Authorize <span class="site" id="site">${esc(v.site)}</span></h1>
<p><span class="site">${esc(v.site)}</span> asks for an API key that spends your account's credit.</p>
${v.error ? `<p class="error" role="alert" id="error">${esc(v.error)}</p>` : ''}
<form method="post" action="/auth/consent">
${fields}
<label for="key">Prove it is you: an API key of your account</label>
<input type="password" id="key" name="key" autocomplete="off" required>
<label for="limit">Credit limit for the new key (optional)</label>
<input type="number" id="limit" name="limit" min="0" step="any">
<div class="actions"><button type="submit" name="action" value="approve" id="approve">Approve</button>
<button type="submit" name="action" value="deny" id="deny" formnovalidate>Deny</button></div>
</form></main></body></html>`;
}
