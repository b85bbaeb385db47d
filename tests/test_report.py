"""`tracecols report`: the HTML file is rendered for a real H100 trace and the 8-rank DLRM lake,
then opened in headless Chromium: no script errors, no requests, every chart drawn with data,
and a screenshot that is not blank."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest
from conftest import CORPUS, DATA_TRACE

EXE = shutil.which("tracecols") or os.path.join(os.path.dirname(sys.executable), "tracecols")
DLRM = CORPUS / "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto"
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
SINGLE = ["chart-gpu-timeline", "chart-top-ops", "chart-top-kernels", "chart-kernel-class",
          "chart-idle-gaps", "chart-queue-depth"]
FLEET = ["chart-rank-steps", "chart-collective-skew", "chart-stragglers"]


def chromium():
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but chromium is not installed (.ci/test installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return exe


def run(*args):
    r = subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r


def browse(html, tmp_path, name, shot=True):
    """(DOM after the page's scripts ran, Chromium's log, screenshot path)."""
    exe = chromium()
    common = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0",
              f"--user-data-dir={tmp_path / ('profile-' + name)}"]
    url = html.resolve().as_uri()
    dom = subprocess.run(common + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
    if not shot:
        return dom.stdout, dom.stderr, None
    png = tmp_path / f"{name}.png"
    shot = subprocess.run(common + [f"--screenshot={png}", "--window-size=1400,3000", url],
                          capture_output=True, text=True, timeout=120)
    assert png.exists(), shot.stderr[-2000:]
    return dom.stdout, dom.stderr + shot.stderr, png


def png_pixels(path):
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) into an array (h, w, channels)."""
    d = path.read_bytes()
    assert d[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat = 8, b""
    while i < len(d):
        n, kind = struct.unpack(">I", d[i:i + 4])[0], d[i + 4:i + 8]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", d[i + 8:i + 18])
        elif kind == b"IDAT":
            idat += d[i + 8:i + 8 + n]
        i += 12 + n
    assert depth == 8 and ctype in (2, 6)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    out = np.zeros((h, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:  # Up
            cur = (line + prev) & 255
        elif f == 1:  # Sub: a running sum per channel
            cur = np.cumsum(line.reshape(w, bpp), axis=0).reshape(stride) & 255
        else:  # Average (3) and Paeth (4): left-dependent, byte by byte
            x, p, ln = [0] * stride, prev.tolist(), line.tolist()
            for k in range(stride):
                a = x[k - bpp] if k >= bpp else 0
                b = p[k]
                if f == 3:
                    x[k] = (ln[k] + ((a + b) >> 1)) & 255
                else:
                    c = p[k - bpp] if k >= bpp else 0
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    x[k] = (ln[k] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            cur = np.array(x, dtype=np.int32)
        out[y] = cur
        prev = cur
    return out.reshape(h, w, bpp)[:, :, :3]


def check(html, tmp_path, name, expected):
    text = html.read_text()
    assert len(text) < 400_000, f"report is {len(text)} bytes"
    # offline: a CSP that forbids every request, and no URL to fetch anyway
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in text
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", text, re.I)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//|@import|<link\b|<iframe\b|<img\b", text, re.I)
    dom, log, png = browse(html, tmp_path, name)
    m = re.search(r'<div id="tc-check">([^<]*)</div>', dom)
    assert m, f"the page's check did not run: {log[-2000:]}"
    res = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert res["errors"] == []
    assert "Uncaught" not in log and "Refused to" not in log, log[-2000:]
    drawn = {c["id"]: c for c in res["charts"]}
    for cid in expected:
        assert cid in drawn, f"{cid} missing; drawn: {sorted(drawn)}"
        assert drawn[cid]["marks"] > 0 and drawn[cid]["drawn"], drawn[cid]
    assert all(c["marks"] > 0 and c["drawn"] for c in res["charts"])  # no empty chart at all
    assert res["tables"] and all(t["rows"] > 0 for t in res["tables"])
    px = png_pixels(png)
    colours = np.unique(px.reshape(-1, 3).astype(np.uint32) @ np.array([65536, 256, 1], dtype=np.uint32))
    assert len(colours) > 50, f"screenshot has only {len(colours)} colours"
    top = px[: px.shape[0] // 3]
    assert (top != top[0, 0]).any(axis=2).mean() > 0.05  # the upper third is not one flat colour
    return res


def test_report_h100(tmp_path):
    out = tmp_path / "h100.html"
    r = run("report", DATA_TRACE, "-o", out)
    assert "wrote" in r.stderr
    res = check(out, tmp_path, "h100", SINGLE + ["chart-roofline"])
    ids = {c["id"] for c in res["charts"]}
    assert not ids & set(FLEET)  # a single trace has no per-rank section
    text = out.read_text()
    assert "H100" in text and "TFLOP/s" in text  # the roofline names the device's roofs


@pytest.mark.corpus
def test_report_dlrm_lake(tmp_path):
    lake = tmp_path / "dlrm.lake"
    run("ingest", DLRM, "-o", lake, "-j", "2")
    out = tmp_path / "dlrm.html"
    run("report", lake, "-o", out)
    res = check(out, tmp_path, "dlrm", SINGLE + FLEET)
    steps = next(c for c in res["charts"] if c["id"] == "chart-rank-steps")
    assert steps["marks"] == 8  # one bar per rank
    assert "lake of 8 traces" in out.read_text()


def test_browser_check_sees_requests_and_errors(tmp_path):
    """The page's own check is live: a request the CSP blocks and a script error both show up."""
    import tracecols
    from tracecols.report import render

    html = render(tracecols.open(DATA_TRACE)).replace(
        "<main>", '<main><img src="https://example.invalid/x.png"><script>undefinedFn()</script>', 1)
    bad = tmp_path / "bad.html"
    bad.write_text(html)
    assert re.search(r"""src\s*=\s*["']?\s*(?:https?:)?//""", html)  # what check() refuses statically
    dom, _, _ = browse(bad, tmp_path, "bad", shot=False)
    res = json.loads(re.search(r'<div id="tc-check">([^<]*)</div>', dom).group(1).replace("&quot;", '"'))
    assert any("undefinedFn" in e for e in res["errors"])
    assert any(e.startswith("blocked https://example.invalid") for e in res["errors"])
