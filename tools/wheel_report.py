"""What a built twinlearn wheel holds: its size, platform tag, compiled
modules, the device code in them and the shared libraries they need.

    python tools/wheel_report.py dist/twinlearn-*.whl [--json out.json] [--max-mb 100]

Exits 1 when the wheel is larger than --max-mb (the release limit), or when
a CUDA module holds no device code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zipfile


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    except FileNotFoundError:
        return ""


_FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)


def _fatbin_entries(data: bytes):
    """(kind, arch) of every entry of every CUDA fat binary in `data`.

    A fat binary is a 16-byte header (magic 0xBA55ED50, version, header
    size, payload size) followed by entries, each a header (kind: 1 PTX,
    2 ELF machine code; its header size at byte 4, payload size at byte 8,
    the architecture as major * 10 + minor at byte 28) and its payload.
    """
    pos = data.find(_FATBIN_MAGIC)
    while pos >= 0:
        _, _, hsize, fsize = struct.unpack_from("<IHHQ", data, pos)
        entry, end = pos + hsize, pos + hsize + fsize
        while entry + 32 <= min(end, len(data)):
            kind, = struct.unpack_from("<H", data, entry)
            ehsize, esize = struct.unpack_from("<IQ", data, entry + 4)
            arch, = struct.unpack_from("<I", data, entry + 28)
            if ehsize == 0:
                break
            yield kind, arch
            entry += ehsize + esize
        pos = data.find(_FATBIN_MAGIC, max(end, pos + 4))


def device_code(path: str) -> dict:
    """The machine code (sm_XY) and PTX (compute_XY) architectures embedded in
    a module, read from its fat binaries."""
    with open(path, "rb") as f:
        data = f.read()
    sm, ptx = set(), set()
    for kind, arch in _fatbin_entries(data):
        (ptx if kind == 1 else sm).add(arch)
    return {"sm": sorted(sm), "ptx": sorted(ptx)}


def needed(path: str) -> list[str]:
    out = _run(["readelf", "-d", path])
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def report(wheel: str) -> dict:
    rep = {"wheel": os.path.basename(wheel), "size_mb": round(os.path.getsize(wheel) / 2**20, 2), "modules": {}}
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as tmp:
        rep["files"] = len(z.namelist())
        wheel_meta = next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))
        rep["tags"] = [ln.split(":", 1)[1].strip() for ln in z.read(wheel_meta).decode().splitlines()
                       if ln.startswith("Tag:")]
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        rep["requires"] = [ln.split(":", 1)[1].strip() for ln in z.read(meta).decode().splitlines()
                           if ln.startswith("Requires-Dist:")]
        for name in z.namelist():
            if not name.endswith(".so") and ".so." not in name:
                continue
            z.extract(name, tmp)
            p = os.path.join(tmp, name)
            info = {"size_mb": round(os.path.getsize(p) / 2**20, 2), "needs": needed(p)}
            if os.path.basename(name).startswith("_cuda"):
                info.update(device_code(p))
            rep["modules"][name] = info
    return rep


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", nargs="+")
    ap.add_argument("--json", help="also write the report here")
    ap.add_argument("--max-mb", type=float, default=100.0)
    args = ap.parse_args(argv)
    reps, rc = [], 0
    for w in args.wheels:
        rep = report(w)
        reps.append(rep)
        print(f"{rep['wheel']}: {rep['size_mb']} MB (limit {args.max_mb:g} MB), tags {', '.join(rep['tags'])}")
        for name, m in rep["modules"].items():
            line = f"  {name}: {m['size_mb']} MB; needs {', '.join(m['needs'])}"
            if "sm" in m:
                line += f"; machine code sm {m['sm']}, PTX {m['ptx']}"
                if m["sm"] == [] and m["ptx"] == []:
                    print(line + "  <- no device code")
                    rc = 1
                    continue
            print(line)
        print("  requires: " + " | ".join(rep["requires"]))
        if rep["size_mb"] > args.max_mb:
            print(f"  the wheel is larger than {args.max_mb:g} MB")
            rc = 1
    if args.json:
        with open(args.json, "w") as f:
            json.dump(reps, f, indent=2)
    return rc


if __name__ == "__main__":
    sys.exit(main())
