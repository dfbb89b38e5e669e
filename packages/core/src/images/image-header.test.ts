import { describe, expect, it } from 'vitest';
import { readImageHeader } from './image-header.js';

const bytes = (...parts: (number[] | string)[]) =>
  new Uint8Array(parts.flatMap((part) => (typeof part === 'string' ? [...part].map((c) => c.charCodeAt(0)) : part)));
const u32be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const u32le = (n: number) => u32be(n).reverse();

describe('readImageHeader', () => {
  it('reads PNG size from IHDR', () => {
    const png = bytes([0x89], 'PNG', [0x0d, 0x0a, 0x1a, 0x0a], u32be(13), 'IHDR', u32be(640), u32be(480), [8, 6, 0, 0, 0]);
    expect(readImageHeader(png)).toEqual({ mediaType: 'image/png', width: 640, height: 480 });
  });

  it('reads JPEG size from the first SOF marker, skipping APPn segments', () => {
    const app0 = [0xff, 0xe0, 0, 16, ...'JFIF'.split('').map((c) => c.charCodeAt(0)), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0];
    const sof2 = [0xff, 0xc2, 0, 17, 8, 0x01, 0x2c, 0x03, 0x20, 3, 1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1];
    expect(readImageHeader(bytes([0xff, 0xd8], app0, sof2))).toEqual({ mediaType: 'image/jpeg', width: 800, height: 300 });
  });

  it('reads WebP size from VP8, VP8L and VP8X chunks', () => {
    const vp8 = bytes('RIFF', u32le(100), 'WEBP', 'VP8 ', u32le(80), [0, 0, 0], [0x9d, 0x01, 0x2a], [0x40, 0x01], [0xf0, 0x00]);
    expect(readImageHeader(vp8)).toEqual({ mediaType: 'image/webp', width: 320, height: 240 });
    // VP8L: 14-bit width-1 and height-1 packed after the 0x2f signature.
    const w = 99;
    const h = 49;
    const packed = (w - 1) | ((h - 1) << 14);
    const vp8l = bytes('RIFF', u32le(100), 'WEBP', 'VP8L', u32le(80), [0x2f], u32le(packed), [0, 0, 0, 0, 0]);
    expect(readImageHeader(vp8l)).toEqual({ mediaType: 'image/webp', width: 99, height: 49 });
    const vp8x = bytes('RIFF', u32le(100), 'WEBP', 'VP8X', u32le(10), [0, 0, 0, 0], [0xff, 0x03, 0], [0xc7, 0, 0], [0, 0]);
    expect(readImageHeader(vp8x)).toEqual({ mediaType: 'image/webp', width: 1024, height: 200 });
  });

  it('refuses other formats and truncated headers', () => {
    expect(readImageHeader(bytes('GIF89a', [1, 0, 1, 0]))).toBeNull();
    expect(readImageHeader(bytes([0x89], 'PNG', [0x0d, 0x0a, 0x1a, 0x0a]))).toBeNull();
    expect(readImageHeader(bytes([0xff, 0xd8, 0xff, 0xd9]))).toBeNull();
    expect(readImageHeader(bytes('%PDF-1.7'))).toBeNull();
    expect(readImageHeader(new Uint8Array(0))).toBeNull();
  });
});
