#!/usr/bin/env python3
"""Build the text corpus the QEMU guest's file system checks copy onto a flaz volume
(guest/e2e-cache.sh: t_cache_fs), with what the guest checks it against.

usage: corpus.py OUTDIR [MIB]

OUTDIR/files/...  plain, uncompressed text files from the host (Perl's modules and pod,
                  /usr/share/doc's text), at most MIB MiB (default 24) in all
OUTDIR/manifest   "sha256  ./path" per file, relative to files/ (for sha256sum -c)
OUTDIR/expect     one line of key=value: the expected deflate ratio of the files' 4 KiB
                  blocks as the cache accounts them, and the counts behind it

The ratio models a file system holding each file in whole 4 KiB blocks, the last one padded
with zeros. Per block, as the kernel accounts it (docs/operations.md "Status"): an all-zero block is a
flag, not counted; otherwise logical += 4096 and physical += round_up(32 + payload, 32),
where payload is the raw-deflate length (level 6, window bits 12, memlevel 8, the kernel's
deflate settings) or 4096 when that exceeds 4096 * (100 - compress_min_saving) / 100 with the
default compress_min_saving of 10 (stored raw).
"""
import hashlib
import os
import re
import shutil
import sys
import zlib

ROOTS = ["/usr/share/perl", "/usr/share/perl5", "/usr/share/doc"]
SKIP_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".lz4", ".zip", ".png", ".jpg", ".jpeg",
                 ".gif", ".ico", ".pdf", ".svg", ".svgz", ".woff", ".woff2", ".ttf", ".so")
# busybox sh, find | xargs and sha256sum -c all take such names as they are
SAFE = re.compile(r"^[A-Za-z0-9._/+-]+$")
BLOCK = 4096
HEADER = 32
MIN_SAVING = 10
RAW_ABOVE = BLOCK * (100 - MIN_SAVING) // 100
ZERO = bytes(BLOCK)


def candidates():
    """Regular text files under ROOTS, in a stable order."""
    for root in ROOTS:
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(d, f)
                if os.path.islink(p) or not os.path.isfile(p) or not SAFE.match(p):
                    continue
                if f.endswith(SKIP_SUFFIXES) or os.path.getsize(p) == 0:
                    continue
                with open(p, "rb") as fh:
                    data = fh.read()
                if b"\0" in data or data[:2] == b"\x1f\x8b":
                    continue
                yield p, data


def deflate_len(block):
    c = zlib.compressobj(6, zlib.DEFLATED, -12, 8)
    return len(c.compress(block) + c.flush())


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: corpus.py OUTDIR [MIB]")
    out = sys.argv[1]
    budget = int(sys.argv[2] if len(sys.argv) == 3 else 24) << 20
    files = os.path.join(out, "files")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(files)
    total = nfiles = blocks = zero = raw = logical = physical = 0
    manifest = []
    for path, data in candidates():
        if total + len(data) > budget:
            continue
        rel = path[len("/usr/share/"):]
        dst = os.path.join(files, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as fh:
            fh.write(data)
        manifest.append("%s  ./%s\n" % (hashlib.sha256(data).hexdigest(), rel))
        total += len(data)
        nfiles += 1
        for off in range(0, len(data), BLOCK):
            block = data[off:off + BLOCK].ljust(BLOCK, b"\0")
            blocks += 1
            if block == ZERO:
                zero += 1
                continue
            n = deflate_len(block)
            if n > RAW_ABOVE:
                n = BLOCK
                raw += 1
            logical += BLOCK
            physical += (HEADER + n + HEADER - 1) // HEADER * HEADER
    if not nfiles or not physical:
        sys.exit("corpus.py: no text files found under %s" % " ".join(ROOTS))
    with open(os.path.join(out, "manifest"), "w") as fh:
        fh.writelines(manifest)
    with open(os.path.join(out, "expect"), "w") as fh:
        fh.write("ratio=%.2f ratio100=%d files=%d bytes=%d blocks=%d zero_blocks=%d "
                 "raw_blocks=%d logical_bytes=%d physical_bytes=%d\n" %
                 (logical / physical, logical * 100 // physical, nfiles, total, blocks,
                  zero, raw, logical, physical))


if __name__ == "__main__":
    main()
