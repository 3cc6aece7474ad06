/**
 * Real-looking secrets of every kind the redactor must catch, and ordinary text it must leave
 * alone. Secrets are assembled at run time from a seeded generator (so the repository holds no
 * string a secret scanner would flag, and a failing case replays), in the exact shapes the
 * providers issue: lengths, alphabets, prefixes, checksum-like markers.
 */
export interface SecretCase {
  name: string;
  /** Text around the secret as a tool would print it; `${S}` marks where the secret goes. */
  context: string;
  secret: string;
  /** Text that must survive redaction (the name of the variable, the host of a URL, …). */
  keeps?: string[];
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const B64URL = `${ALNUM}-_`;
const B64 = `${ALNUM}+/`;
const UPPER_NUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const HEX = '0123456789abcdef';

export function generator(seed = 9) {
  const r = rng(seed);
  const pick = (alphabet: string, n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(r() * alphabet.length)];
    // Generated keys mix digits and letters; make sure a short draw does too.
    if (!/\d/.test(alphabet) || !/[A-Za-z]/.test(alphabet) || (/\d/.test(s) && /[A-Za-z]/.test(s))) return s;
    return `${s.slice(0, -2)}${/\d/.exec(alphabet)![0]}${/[A-Za-z]/.exec(alphabet)![0]}`;
  };
  return { pick };
}

const b64url = (s: string) => Buffer.from(s).toString('base64url');

export function secretCorpus(seed = 9): SecretCase[] {
  const { pick } = generator(seed);
  const pemBody = (magic: string, lines: number) => [magic + pick(B64, 64 - magic.length), ...Array.from({ length: lines }, () => pick(B64, 64)), `${pick(B64, 40)}==`].join('\n');
  const jwt = `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(`{"sub":"${pick(HEX, 12)}","name":"Jane Doe","iat":1716239022}`)}.${pick(B64URL, 43)}`;
  return [
    { name: 'Anthropic API key', context: 'ANTHROPIC_API_KEY=${S}', secret: `sk-ant-api03-${pick(B64URL, 93)}AA`, keeps: ['ANTHROPIC_API_KEY='] },
    { name: 'Anthropic key in prose', context: 'the key is ${S}, keep it safe', secret: `sk-ant-api03-${pick(B64URL, 93)}AA`, keeps: ['the key is ', ', keep it safe'] },
    { name: 'Anthropic admin key', context: 'admin: "${S}"', secret: `sk-ant-admin01-${pick(B64URL, 93)}AA` },
    { name: 'Anthropic OAuth token', context: 'CLAUDE_CODE_OAUTH_TOKEN=${S}', secret: `sk-ant-oat01-${pick(B64URL, 95)}` },
    { name: 'OpenAI project key', context: 'export OPENAI_API_KEY="${S}"', secret: `sk-proj-${pick(B64URL, 74)}T3BlbkFJ${pick(B64URL, 74)}`, keeps: ['export OPENAI_API_KEY="'] },
    { name: 'OpenAI service account key', context: 'key=${S}', secret: `sk-svcacct-${pick(B64URL, 58)}T3BlbkFJ${pick(B64URL, 58)}` },
    { name: 'OpenAI legacy key', context: 'openai.api_key = "${S}"', secret: `sk-${pick(ALNUM, 20)}T3BlbkFJ${pick(ALNUM, 20)}` },
    { name: 'other sk- key (DeepSeek-like)', context: 'Using key ${S} for the request', secret: `sk-${pick(HEX, 32)}` },
    { name: 'AWS access key id', context: 'aws_access_key_id = ${S}', secret: `AKIA${pick(UPPER_NUM, 16)}` },
    { name: 'AWS temporary key id', context: '"AccessKeyId": "${S}",', secret: `ASIA${pick(UPPER_NUM, 16)}` },
    { name: 'AWS secret access key', context: 'aws_secret_access_key = ${S}', secret: pick(`${ALNUM}/+`, 40), keeps: ['aws_secret_access_key = '] },
    { name: 'GitHub classic token', context: 'GITHUB_TOKEN=${S}', secret: `ghp_${pick(ALNUM, 36)}` },
    { name: 'GitHub OAuth token', context: 'token: ${S}', secret: `gho_${pick(ALNUM, 36)}` },
    { name: 'GitHub app token', context: 'Authorization: token ${S}', secret: `ghs_${pick(ALNUM, 36)}` },
    { name: 'GitHub fine-grained token', context: '${S}', secret: `github_pat_${pick(ALNUM, 22)}_${pick(ALNUM, 59)}` },
    { name: 'GitHub token in a git remote', context: 'origin\thttps://x-access-token:${S}@github.com/org/repo.git (fetch)', secret: `ghp_${pick(ALNUM, 36)}`, keeps: ['x-access-token:', '@github.com/org/repo.git'] },
    { name: 'Slack bot token', context: 'SLACK_BOT_TOKEN=${S}', secret: `xoxb-${pick('0123456789', 12)}-${pick('0123456789', 13)}-${pick(ALNUM, 24)}` },
    { name: 'Slack user token', context: 'token=${S}&channel=C123', secret: `xoxp-${pick('0123456789', 12)}-${pick('0123456789', 12)}-${pick('0123456789', 13)}-${pick(HEX, 32)}` },
    { name: 'Slack session token', context: 'cookie d=${S}', secret: `xoxs-${pick('0123456789', 12)}-${pick('0123456789', 12)}-${pick(HEX, 32)}` },
    { name: 'Slack webhook', context: 'curl -X POST ${S}', secret: `https://hooks.slack.com/services/T${pick(ALNUM, 8)}/B${pick(ALNUM, 10)}/${pick(ALNUM, 24)}` },
    { name: 'RSA private key', context: 'cat id_rsa\n${S}\n$ ', secret: `-----BEGIN RSA PRIVATE KEY-----\n${pemBody('MIIEowIBAAKCAQEA', 20)}\n-----END RSA PRIVATE KEY-----`, keeps: ['cat id_rsa\n', '\n$ '] },
    { name: 'OpenSSH private key', context: '${S}', secret: `-----BEGIN OPENSSH PRIVATE KEY-----\n${pemBody('b3BlbnNzaC1rZXktdjEAAAAA', 6)}\n-----END OPENSSH PRIVATE KEY-----` },
    { name: 'PKCS#8 private key', context: '${S}', secret: `-----BEGIN PRIVATE KEY-----\n${pemBody('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 12)}\n-----END PRIVATE KEY-----` },
    { name: 'EC private key', context: '${S}', secret: `-----BEGIN EC PRIVATE KEY-----\n${pemBody('MHcCAQEEI', 1)}\n-----END EC PRIVATE KEY-----` },
    { name: 'encrypted private key', context: '${S}', secret: `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${pemBody('MIIFHDBOBgkqhkiG9w0BBQ0w', 10)}\n-----END ENCRYPTED PRIVATE KEY-----` },
    { name: 'PGP private key', context: '${S}', secret: `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${pemBody('lQOYBF', 10)}\n-----END PGP PRIVATE KEY BLOCK-----` },
    { name: 'private key in JSON (service account)', context: '{"type":"service_account","private_key":"${S}","client_email":"x@p.iam.gserviceaccount.com"}', secret: `-----BEGIN PRIVATE KEY-----\\n${pemBody('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 8).replace(/\n/g, '\\n')}\\n-----END PRIVATE KEY-----\\n`.replace(/\\n$/, ''), keeps: ['"client_email":"x@p.iam.gserviceaccount.com"'] },
    { name: 'JWT', context: 'Cookie: session=${S}; Path=/', secret: jwt, keeps: ['Cookie: session=', '; Path=/'] },
    { name: 'Bearer token', context: 'Authorization: Bearer ${S}', secret: pick(B64URL, 40), keeps: ['Authorization: Bearer '] },
    { name: 'x-api-key header', context: '> x-api-key: ${S}\n> accept: */*', secret: pick(B64URL, 48), keeps: ['> accept: */*'] },
    { name: 'Stripe live key', context: 'STRIPE_KEY=${S}', secret: `sk_live_${pick(ALNUM, 24)}` },
    { name: 'Stripe restricted key', context: '"${S}"', secret: `rk_live_${pick(ALNUM, 24)}` },
    { name: 'Google API key', context: 'const MAPS = "${S}";', secret: `AIza${pick(B64URL, 35)}` },
    { name: 'npm token', context: '//registry.npmjs.org/:_authToken=${S}', secret: `npm_${pick(ALNUM, 36)}` },
    { name: 'npm token in .npmrc', context: '//npm.example.com/:_authToken=${S}', secret: pick(HEX, 36) },
    { name: 'GitLab token', context: 'PRIVATE-TOKEN: ${S}', secret: `glpat-${pick(B64URL, 20)}` },
    { name: 'Hugging Face token', context: 'HF_TOKEN=${S}', secret: `hf_${pick('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 34)}` },
    { name: 'SendGrid key', context: 'SENDGRID=${S}', secret: `SG.${pick(B64URL, 22)}.${pick(B64URL, 43)}` },
    { name: 'Postgres URL password', context: 'DATABASE_URL=postgres://app:${S}@db.internal:5432/app', secret: `pW${pick(ALNUM, 14)}`, keeps: ['postgres://app:', '@db.internal:5432/app'] },
    { name: 'MongoDB URL password', context: 'mongodb+srv://admin:${S}@cluster0.mongodb.net/test', secret: `Zq${pick(ALNUM, 18)}`, keeps: ['@cluster0.mongodb.net/test'] },
    { name: 'HTTPS basic auth', context: 'https://deploy:${S}@artifacts.example.com/repo', secret: `d3${pick(ALNUM, 16)}` },
    { name: 'password in .env', context: 'DATABASE_PASSWORD=${S}', secret: `s3cr3t${pick(ALNUM, 8)}!`, keeps: ['DATABASE_PASSWORD='] },
    { name: 'secret in printenv', context: 'HOME=/root\nMY_SERVICE_SECRET=${S}\nSHELL=/bin/bash', secret: pick(ALNUM, 32), keeps: ['HOME=/root\n', '\nSHELL=/bin/bash'] },
    { name: 'client secret in JSON', context: '{"client_id": "abc", "client_secret": "${S}"}', secret: pick(B64URL, 30), keeps: ['"client_id": "abc"'] },
    { name: 'password in YAML', context: 'db:\n  user: app\n  password: ${S}\n', secret: `hunter${pick('0123456789', 4)}Xy`, keeps: ['  user: app\n'] },
    { name: 'token in code', context: "const apiKey = '${S}';", secret: pick(ALNUM, 40) },
  ];
}

/** Ordinary output that must come through unchanged. */
export function ordinaryCorpus(): string[] {
  return [
    'commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39\nAuthor: Jane Doe <jane@example.com>\nDate:   Tue May 7 10:00:00 2024 +0200',
    '3f2a9c1 fix: handle empty input\n8e7b6a5 feat: add the parser (#42)',
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  package.json',
    'id: 550e8400-e29b-41d4-a716-446655440000, parent: 6ba7b810-9dad-11d1-80b4-00c04fd430c8',
    'echo SGVsbG8gd29ybGQsIHRoaXMgaXMgbm9ybWFsIHRleHQgYW5kIG5vdGhpbmcgc2VjcmV0Lg== | base64 -d',
    '"integrity": "sha512-Nqc90v4lWCXyakD6xNyNACBJNJ0tNCwj2WNk/7ivyacYHxiITVgmLUFXTBOeCdy79iz6HtN9Y31uw/jbLrdOAg=="',
    'docker image: sha256:9b2a4b0e7f3c1d2e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e',
    'const token = process.env.GITHUB_TOKEN;\nif (!token) throw new Error("set GITHUB_TOKEN");',
    'password = getPassword(user)\napiKey: config.apiKey,\nconst secret = await vault.read(path);',
    'TOKEN_LIMIT=4096\nMAX_TOKENS=1024\nPWD=/home/jane/project\nSSH_AUTH_SOCK=/tmp/ssh-XXXXabcd/agent.1234\nGIT_AUTHOR_NAME=Jane Doe',
    'ANTHROPIC_API_KEY=your-key-here\nOPENAI_API_KEY=${OPENAI_API_KEY}\nAPI_KEY=<your key>\npassword: changeme',
    'pip install scikit-learn # sk-learn\n<div class="sk-circle-bounce-delay-animation-infinite">',
    'https://github.com/org/repo.git\npostgres://localhost:5432/app\nssh://git@github.com/org/repo.git',
    'v1.2.3-beta.4+build.567 listening on 127.0.0.1:8080 and [::1]:8080',
    'src/core/security/secrets.ts:42:  const found: SecretFinding[] = [];',
    '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----',
    '-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----',
    'tokenizer: "cl100k_base"\nmax_tokens: 4096\nsecret_santa: true',
    'Run `npm run test:unit -- --reporter=dot` to check; 1234 passed, 0 failed',
    'total 48\ndrwxr-xr-x  5 jane staff   160 May  7 10:00 .\n-rw-r--r--  1 jane staff  1077 May  7 09:59 README.md',
    'The word eyJ alone, and eyJhbGciOiJIUzI1NiJ9 without a payload.',
    'AKIA is a prefix; AKIAshort is not a key.',
  ];
}
