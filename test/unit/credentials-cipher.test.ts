import { randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { KmsEnvelopeCipher, LocalKeyCipher } from '../../functions/platform/credentials-cipher.ts';

const ctx = { tenantId: 't1', projectId: 'p1', kind: 'source' };
const secret = JSON.stringify({ personal_access_token: 'pat-123456' });

describe('sealed credentials', () => {
  it('round-trips with AES-256-GCM and never stores the plaintext', async () => {
    const cipher = new LocalKeyCipher(randomBytes(32));
    const sealed = await cipher.seal(secret, ctx);
    expect(sealed).toMatchObject({ v: 1, alg: 'A256GCM' });
    expect(JSON.stringify(sealed)).not.toContain('pat-123456');
    expect(await cipher.open(sealed, ctx)).toBe(secret);
    expect((await cipher.seal(secret, ctx)).iv).not.toBe(sealed.iv);
  });

  it('refuses a value moved to another project, a tampered value and another key', async () => {
    const key = randomBytes(32);
    const cipher = new LocalKeyCipher(key);
    const sealed = await cipher.seal(secret, ctx);
    await expect(cipher.open(sealed, { ...ctx, projectId: 'p2' })).rejects.toThrow();
    const flipped = Buffer.from(sealed.ct, 'base64');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    await expect(cipher.open({ ...sealed, ct: flipped.toString('base64') }, ctx)).rejects.toThrow();
    await expect(new LocalKeyCipher(randomBytes(32)).open(sealed, ctx)).rejects.toThrow();
    expect(() => new LocalKeyCipher(randomBytes(16))).toThrow(/32 bytes/);
  });

  it('uses a fresh KMS data key per value, bound to the same encryption context', async () => {
    const kms = mockClient(KMSClient);
    const plainKey = randomBytes(32);
    kms.on(GenerateDataKeyCommand).callsFake(async () => ({
      Plaintext: new Uint8Array(plainKey),
      CiphertextBlob: new Uint8Array([1, 2, 3]),
    }));
    kms.on(DecryptCommand).callsFake(async () => ({ Plaintext: new Uint8Array(plainKey) }));
    const cipher = new KmsEnvelopeCipher(new KMSClient({ region: 'eu-west-2' }), 'alias/tms-credentials');
    const sealed = await cipher.seal(secret, ctx);
    expect(sealed.edk).toBe(Buffer.from([1, 2, 3]).toString('base64'));
    expect(await cipher.open(sealed, ctx)).toBe(secret);
    expect(kms.commandCalls(GenerateDataKeyCommand)[0]?.args[0].input).toEqual({
      KeyId: 'alias/tms-credentials',
      KeySpec: 'AES_256',
      EncryptionContext: ctx,
    });
    expect(kms.commandCalls(DecryptCommand)[0]?.args[0].input.EncryptionContext).toEqual(ctx);
    kms.restore();
  });
});
