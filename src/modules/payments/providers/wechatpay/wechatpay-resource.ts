import { createDecipheriv } from 'node:crypto';

/** A notification's `resource`: the transaction, sealed with the merchant's APIv3 key. */
export interface EncryptedResource {
  algorithm: string;
  ciphertext: string;
  nonce: string;
  associated_data?: string;
}

const ALGORITHM = 'AEAD_AES_256_GCM';
const TAG_BYTES = 16;

/**
 * Opens a resource sealed with AEAD_AES_256_GCM: the ciphertext is base64 with the 16-byte tag at its
 * end. Throws when the key, nonce, associated data or any byte is not what sealed it.
 */
export function decryptResource(apiV3Key: Buffer, resource: EncryptedResource): string {
  if (resource.algorithm !== ALGORITHM) {
    throw new Error(`the resource is not sealed with ${ALGORITHM}`);
  }
  const sealed = Buffer.from(resource.ciphertext, 'base64');
  if (sealed.length < TAG_BYTES) {
    throw new Error('the resource is shorter than its tag');
  }
  const decipher = createDecipheriv('aes-256-gcm', apiV3Key, Buffer.from(resource.nonce, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  decipher.setAAD(Buffer.from(resource.associated_data ?? '', 'utf8'));
  const plain = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
  return plain.toString('utf8');
}
