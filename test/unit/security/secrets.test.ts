import { describe, expect, it } from 'vitest';
import { containsSecret, findSecrets, redactSecrets } from '../../../src/core/security/secrets';
import { StreamRedactor } from '../../../src/core/security/streamRedactor';
import { generator, ordinaryCorpus, secretCorpus } from './secretCorpus';

/** True when any 16-character piece of `secret` (or all of it, if shorter) is still in `text`. */
function leaks(text: string, secret: string): string | null {
  const w = Math.min(16, secret.length);
  for (let i = 0; i + w <= secret.length; i++) {
    const piece = secret.slice(i, i + w);
    if (text.includes(piece)) return piece;
  }
  return null;
}

describe('redactSecrets: real-looking secrets of every kind', () => {
  it.each(secretCorpus().map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const text = c.context.replace('${S}', c.secret);
    const out = redactSecrets(text);
    expect(leaks(out, c.secret), out).toBeNull();
    expect(out).toMatch(/\[REDACTED:[a-z0-9-]+\]/);
    for (const k of c.keeps ?? []) expect(out).toContain(k);
    expect(containsSecret(text)).toBe(true);
  });

  it('catches them with other random draws too (not one lucky seed)', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      for (const c of secretCorpus(seed)) {
        const out = redactSecrets(c.context.replace('${S}', c.secret));
        expect(leaks(out, c.secret), `${c.name} (seed ${seed}): ${out}`).toBeNull();
      }
    }
  });

  it('finds every secret of a long output where it is, and keeps the rest byte for byte', () => {
    const cases = secretCorpus();
    const filler = ordinaryCorpus().join('\n');
    const text = cases.map((c) => `${filler}\n${c.context.replace('${S}', c.secret)}\n`).join('');
    const out = redactSecrets(text);
    expect(out.split(filler).length).toBe(cases.length + 1);
    // (The filler holds a public key whose header bytes a private key shares.)
    const redactedParts = out.split(filler).join('');
    for (const c of cases) expect(leaks(redactedParts, c.secret), c.name).toBeNull();
  });
});

describe('redactSecrets: ordinary output stays as it is', () => {
  it.each(ordinaryCorpus().map((t) => [t.slice(0, 50), t] as const))('%s', (_label, text) => {
    expect(findSecrets(text)).toEqual([]);
    expect(redactSecrets(text)).toBe(text);
  });

  it('leaves 1,000 git SHAs, UUIDs and base64 of ordinary text alone', () => {
    const { pick } = generator(3);
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) {
      lines.push(pick('0123456789abcdef', 40));
      lines.push(crypto.randomUUID());
      lines.push(Buffer.from(`line ${i} of an ordinary log: the build finished in ${i} ms`).toString('base64'));
    }
    const text = lines.join('\n');
    expect(redactSecrets(text)).toBe(text);
  });
});

describe('known values: the keys Keel holds', () => {
  it('redacts a held key whatever its shape, everywhere it appears', () => {
    const key = 'local-ollama-key-42';
    const out = redactSecrets(`a ${key} b\nKEY=${key}`, [key]);
    expect(out).not.toContain(key);
    expect(out).toBe('a [REDACTED:known-value] b\nKEY=[REDACTED:known-value]');
  });

  it('ignores short values, which would garble output', () => {
    expect(redactSecrets('the cat sat', ['cat'])).toBe('the cat sat');
  });
});

describe('redaction is idempotent and marks what it removed', () => {
  it('redacting twice gives the same text', () => {
    for (const c of secretCorpus()) {
      const once = redactSecrets(c.context.replace('${S}', c.secret));
      expect(redactSecrets(once), c.name).toBe(once);
    }
  });

  it('names the kind', () => {
    const key = secretCorpus()[0]!.secret;
    expect(redactSecrets(`k=${key}`)).toMatch(/^k=\[REDACTED:anthropic[a-z-]*\]$/);
  });
});

describe('StreamRedactor: secrets split across chunks', () => {
  const feed = (text: string, sizes: number[], known: string[] = []) => {
    const r = new StreamRedactor(() => known);
    let out = '';
    let at = 0;
    for (let i = 0; at < text.length; i++) {
      const n = sizes[i % sizes.length]!;
      out += r.push(text.slice(at, at + n));
      at += n;
    }
    return out + r.end();
  };

  it('whatever the chunk sizes, the stream comes out as the whole text redacted', () => {
    const text = secretCorpus().map((c) => `$ step\n${c.context.replace('${S}', c.secret)}\n`).join('');
    const whole = redactSecrets(text, ['local-ollama-key-42']);
    for (const sizes of [[1], [2, 3], [7], [64], [1000], [4096, 1], [text.length]]) {
      expect(feed(`${text}local-ollama-key-42\n`, sizes, ['local-ollama-key-42'])).toBe(`${whole}[REDACTED:known-value]\n`);
    }
  });

  it('lets a progress line redrawn with carriage returns out as it comes', () => {
    const r = new StreamRedactor(() => []);
    expect(r.push('downloading 10%\r')).toBe('downloading 10%\r');
    expect(r.push('downloading 55%')).toBe('');
    expect(r.push('\rdone\n')).toBe('downloading 55%\rdone\n');
  });

  it('holds a private key until its END line, and lets ordinary lines out at once', () => {
    const pem = secretCorpus().find((c) => c.name === 'RSA private key')!.secret;
    const r = new StreamRedactor(() => []);
    expect(r.push('building\n')).toBe('building\n');
    const lines = pem.split('\n');
    let out = '';
    for (const l of lines.slice(0, -1)) out += r.push(`${l}\n`);
    expect(out).toBe('');
    out += r.push(`${lines.at(-1)}\ndone\n`);
    expect(out).toBe('[REDACTED:private-key]\ndone\n');
    expect(r.end()).toBe('');
  });

  it('a key block cut off by the end of the output is redacted to the end', () => {
    const pem = secretCorpus().find((c) => c.name === 'RSA private key')!.secret;
    const cut = pem.slice(0, pem.length - 60);
    expect(feed(`ok\n${cut}`, [100])).toBe('ok\n[REDACTED:private-key]');
  });

  it('a key block too long to hold is replaced and the rest of it dropped up to its END line', () => {
    const r = new StreamRedactor(() => [], { maxLine: 1000, holdBack: 100, maxBlock: 500 });
    let out = r.push('-----BEGIN RSA PRIVATE KEY-----\n');
    for (let i = 0; i < 50; i++) out += r.push(`${'MIIabc'.repeat(10)}\n`);
    out += r.push('-----END RSA PRIVATE KEY-----\nafter\n');
    out += r.end();
    expect(out).toBe('[REDACTED:private-key]\nafter\n');
  });

  it('a very long line without a newline is let out, holding back enough for a key at its end', () => {
    const key = secretCorpus()[0]!.secret;
    const r = new StreamRedactor(() => [], { maxLine: 1000, holdBack: 300, maxBlock: 5000 });
    let out = '';
    for (let i = 0; i < 20; i++) out += r.push('x'.repeat(100));
    expect(out.length).toBeGreaterThan(0);
    out += r.push(` ${key.slice(0, 50)}`);
    out += r.push(key.slice(50));
    out += r.end();
    expect(out).toMatch(new RegExp(`^x{2000} \\[REDACTED:anthropic[a-z-]*\\]$`));
  });
});
