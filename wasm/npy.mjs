// Reads the committed fixture's .npy files in Node.js for wasm/example.mjs
// and the tests (not part of the npm package).

import { readFileSync } from 'node:fs';

/**
 * A little-endian f32 C-order .npy file (format 1.0 or 2.0) as
 * {rows, cols, data, row(i)}; row(i) is a view, not a copy.
 */
export function readNpyF32(path) {
  const buf = readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  if (!/'descr':\s*'<f4'/.test(header) || !/'fortran_order':\s*False/.test(header)) {
    throw new Error(`${path}: need little-endian f32 in C order, header ${header}`);
  }
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const [rows, cols = 1] = shape;
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + start + rows * cols * 4));
  return { rows, cols, data, row: (i) => data.subarray(i * cols, (i + 1) * cols) };
}
