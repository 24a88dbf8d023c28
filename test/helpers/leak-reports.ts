import { createSign, generateKeyPairSync } from 'node:crypto';

/**
 * A secret-scanning partner that signs its reports with ECDSA P-256 (GitHub's scheme): its public
 * key as PEM, for the oauth plugin's `leaks.public_keys`, and the headers that sign a body.
 */
export function ecdsaPartner(keyIdentifier: string) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    sign: (body: string) => ({
      'Github-Public-Key-Identifier': keyIdentifier,
      'Github-Public-Key-Signature': createSign('sha256').update(body).sign(privateKey).toString('base64'),
    }),
  };
}

/** POST a leaked-key report (raw body, given headers) to the gateway's partner endpoint. */
export function reportLeak(gw: { url: string }, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${gw.url}/v1/keys/leaked`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}
