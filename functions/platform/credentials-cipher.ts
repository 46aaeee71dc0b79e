/**
 * Tracker credentials at rest: AES-256-GCM, bound to their place (tenant, project, kind) as additional
 * authenticated data, so a sealed value copied to another project does not open. Offline the key comes from
 * configuration (CREDENTIALS_KEY / CREDENTIALS_KEY_FILE); in AWS each value gets a fresh data key from KMS
 * (CREDENTIALS_KMS_KEY_ID), stored encrypted beside it (envelope encryption).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { adapterSlot } from './adapter-slot.ts';
import { type EnvInput, readEnv } from './env.ts';

const CIPHER_VARIABLES = [
  'CREDENTIALS_KMS_KEY_ID',
  'CREDENTIALS_KEY',
  'CREDENTIALS_KEY_FILE',
  'AWS_REGION',
] as const;

export interface SealedSecret {
  v: 1;
  alg: 'A256GCM';
  iv: string;
  tag: string;
  ct: string;
  /** Present with KMS: the data key, encrypted by the KMS key. */
  edk?: string;
}

export interface CredentialCipher {
  seal(plaintext: string, context: Record<string, string>): Promise<SealedSecret>;
  open(sealed: SealedSecret, context: Record<string, string>): Promise<string>;
}

const aad = (context: Record<string, string>) =>
  Buffer.from(
    Object.keys(context)
      .sort()
      .map((k) => `${k}=${context[k]}`)
      .join('&'),
  );

function encrypt(
  key: Uint8Array,
  plaintext: string,
  context: Record<string, string>,
): Omit<SealedSecret, 'edk'> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(context));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return {
    v: 1,
    alg: 'A256GCM',
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ct: ct.toString('base64'),
  };
}

function decrypt(key: Uint8Array, sealed: SealedSecret, context: Record<string, string>): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(aad(context));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString(
    'utf8',
  );
}

export class LocalKeyCipher implements CredentialCipher {
  constructor(private readonly key: Uint8Array) {
    if (key.length !== 32) throw new Error('the credentials key must be 32 bytes (AES-256)');
  }

  async seal(plaintext: string, context: Record<string, string>): Promise<SealedSecret> {
    return encrypt(this.key, plaintext, context);
  }

  async open(sealed: SealedSecret, context: Record<string, string>): Promise<string> {
    return decrypt(this.key, sealed, context);
  }
}

export class KmsEnvelopeCipher implements CredentialCipher {
  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
  ) {}

  async seal(plaintext: string, context: Record<string, string>): Promise<SealedSecret> {
    const dataKey = await this.kms.send(
      new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256', EncryptionContext: context }),
    );
    if (!dataKey.Plaintext || !dataKey.CiphertextBlob) throw new Error('KMS returned no data key');
    try {
      return {
        ...encrypt(dataKey.Plaintext, plaintext, context),
        edk: Buffer.from(dataKey.CiphertextBlob).toString('base64'),
      };
    } finally {
      dataKey.Plaintext.fill(0);
    }
  }

  async open(sealed: SealedSecret, context: Record<string, string>): Promise<string> {
    if (!sealed.edk) throw new Error('sealed value has no data key');
    const out = await this.kms.send(
      new DecryptCommand({ CiphertextBlob: Buffer.from(sealed.edk, 'base64'), EncryptionContext: context }),
    );
    if (!out.Plaintext) throw new Error('KMS returned no plaintext');
    try {
      return decrypt(out.Plaintext, sealed, context);
    } finally {
      out.Plaintext.fill(0);
    }
  }
}

/** The cipher this environment configures; fails with the variables' names when none is set. */
export function cipherFromEnv(source?: EnvInput): CredentialCipher {
  const env = readEnv(CIPHER_VARIABLES, source);
  if (env.CREDENTIALS_KMS_KEY_ID)
    return new KmsEnvelopeCipher(new KMSClient({ region: env.AWS_REGION }), env.CREDENTIALS_KMS_KEY_ID);
  const encoded =
    env.CREDENTIALS_KEY ??
    (env.CREDENTIALS_KEY_FILE ? readFileSync(env.CREDENTIALS_KEY_FILE, 'utf8').trim() : undefined);
  if (!encoded)
    throw new Error(
      'Invalid configuration: CREDENTIALS_KMS_KEY_ID, CREDENTIALS_KEY or CREDENTIALS_KEY_FILE is required',
    );
  return new LocalKeyCipher(Buffer.from(encoded, 'base64'));
}

/** The process's cipher (see adapter-slot.ts): chosen from the environment at first use, then kept. */
export const credentialCipher = adapterSlot(() => cipherFromEnv());
