#!/usr/bin/env python3
"""png_check.py - decode a PNG with nothing but zlib (tests/lua/test_plot_save.lua runs it):
the signature, every chunk's CRC, IHDR's width and height, the IDAT stream inflated to
exactly height x (1 + width x bytes per pixel) bytes, the scanlines unfiltered (filters 0-4).
Prints "ok WIDTH HEIGHT INK COLOURS": INK = pixels that differ from the top-left one (the
background), COLOURS = distinct pixel values. Exit 1 with a reason on any defect.
usage: png_check.py FILE"""
import struct
import sys
import zlib


def fail(msg):
    print("bad: " + msg)
    sys.exit(1)


def main(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("no PNG signature")
    pos, ihdr, idat, end = 8, None, b"", False
    while pos < len(data):
        if pos + 8 > len(data):
            fail("truncated chunk header at byte %d" % pos)
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if len(body) != n or pos + 12 + n > len(data):
            fail("chunk %r truncated" % kind)
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            fail("chunk %r has a bad CRC" % kind)
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            end = True
            break
        pos += 12 + n
    if not ihdr or not end:
        fail("no IHDR or no IEND")
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or interlace != 0:
        fail("depth %d interlace %d (expected 8, 0)" % (depth, interlace))
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if not bpp:
        fail("colour type %d" % ctype)
    raw = zlib.decompress(idat)
    stride = w * bpp
    if len(raw) != h * (stride + 1):
        fail("IDAT inflates to %d bytes, expected %d" % (len(raw), h * (stride + 1)))
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            elif f != 0:
                fail("row %d has filter %d" % (y, f))
        rows.append(bytes(line))
        prev = line
    bg = rows[0][:bpp]
    ink, colours = 0, set()
    for r in rows:
        for x in range(0, stride, bpp):
            px = r[x:x + bpp]
            colours.add(px)
            if px != bg:
                ink += 1
    print("ok %d %d %d %d" % (w, h, ink, len(colours)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail(__doc__)
    main(sys.argv[1])
