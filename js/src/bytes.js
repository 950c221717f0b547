// Checksums (CRC-32, SHA-256 by WebCrypto) and the little-endian reads of the
// table formats (FORMAT.md section 1).

import { ChompTablesError } from "./errors.js";

export const U32_MAX = 0xffffffff;
export const TWO32 = 4294967296;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** The IEEE CRC-32 of FORMAT.md section 1 (crc32("123456789") = 0xCBF43926). */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function subtle() {
  const s = globalThis.crypto && globalThis.crypto.subtle;
  if (!s) {
    throw new ChompTablesError(
      "SHA-256 needs WebCrypto (crypto.subtle), which a browser gives only to secure pages: serve the page over https or from localhost",
    );
  }
  return s;
}

export async function sha256(bytes) {
  return new Uint8Array(await subtle().digest("SHA-256", bytes));
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function hex(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]];
  return s;
}

export async function sha256Hex(bytes) {
  return hex(await sha256(bytes));
}

export function equalBytes(a, b, n = Math.max(a.length, b.length)) {
  if (a.length < n || b.length < n) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A u64 (little-endian) as a Number: exact below 2^53, larger values only compare as large. */
export function u64(dv, off) {
  return dv.getUint32(off, true) + dv.getUint32(off + 4, true) * TWO32;
}

export function view(bytes) {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
