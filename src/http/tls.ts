import fs from 'node:fs';
import path from 'node:path';
import { generate } from 'selfsigned';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** Where the material came from, for the start-up log. */
  origin: 'files' | 'generated' | 'data-dir';
}

/**
 * The certificate from TLS_CERT_FILE/TLS_KEY_FILE, else the one in DATA_DIR/tls,
 * else a new self-signed one written there on first start (README.md,
 * "Operating it": DATA_DIR).
 */
export async function loadTls(opts: { certFile: string | null; keyFile: string | null; dataDir: string }): Promise<TlsMaterial> {
  if (opts.certFile && opts.keyFile) {
    return { cert: fs.readFileSync(opts.certFile, 'utf8'), key: fs.readFileSync(opts.keyFile, 'utf8'), origin: 'files' };
  }
  const dir = path.join(opts.dataDir, 'tls');
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  if (fs.existsSync(certPath) && fs.existsSync(keyPath)) {
    return { cert: fs.readFileSync(certPath, 'utf8'), key: fs.readFileSync(keyPath, 'utf8'), origin: 'data-dir' };
  }
  const notAfter = new Date();
  notAfter.setDate(notAfter.getDate() + 825);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256', // selfsigned defaults to SHA-1, which clients refuse
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(keyPath, pems.private, { mode: 0o600 });
  fs.writeFileSync(certPath, pems.cert, { mode: 0o600 });
  return { cert: pems.cert, key: pems.private, origin: 'generated' };
}

/**
 * Cipher suites offered (Mozilla's "intermediate" profile without its DHE suites): TLS 1.2
 * only with ECDHE key exchange and AEAD encryption (no static-RSA key exchange, no CBC,
 * no SHA-1 MACs); TLS 1.3 with its three standard suites.
 */
export const TLS_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');
