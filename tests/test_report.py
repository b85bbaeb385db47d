"""`tracecols report`: the HTML file is rendered for a real H100 trace and the 8-rank DLRM lake,
then opened in headless Chromium: no script errors, no requests, every chart drawn with data,
and a screenshot that is not blank. Then, measured by the browser at two window widths, every
chart's text lies inside its SVG and every data mark inside its plot; the queue-depth axis holds
the deepest queue counted from `kernels`; a lake labels each trace distinctly; and each line of
`traces.warnings` is in the report with its count."""

import html as html_lib
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
HTA = CORPUS / "HolisticTraceAnalysis/tests/data"
SGLANG = CORPUS / "TraceLens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz"
MTIA = HTA / "mtia_inference_trace/mtia_inference_rank_0.json.gz"
# five traces that all say rank 0; two of them are both named event_sync_trace.json.gz
RANK0 = [
    HTA / "critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    HTA / "critical_path/cuda_event_sync/event_sync_trace.json.gz",
    HTA / "critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz",
    HTA / "critical_path/end_to_end/simple_add/input/trace.json.gz",
    HTA / "execution_trace/benchmark_simple_add_trace.json.gz",
]
WIDTHS = (1400, 800)
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
SINGLE = [
    "chart-gpu-timeline",
    "chart-top-ops",
    "chart-top-kernels",
    "chart-kernel-class",
    "chart-stacks",
    "chart-critical-path",
    "chart-idle-gaps",
    "chart-queue-depth",
]
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
    common = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={tmp_path / ('profile-' + name)}",
    ]
    url = html.resolve().as_uri()
    dom = subprocess.run(common + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
    if not shot:
        return dom.stdout, dom.stderr, None
    png = tmp_path / f"{name}.png"
    shot = subprocess.run(
        common + [f"--screenshot={png}", "--window-size=1400,3000", url], capture_output=True, text=True, timeout=120
    )
    assert png.exists(), shot.stderr[-2000:]
    return dom.stdout, dom.stderr + shot.stderr, png


def png_pixels(path):
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) into an array (h, w, channels)."""
    d = path.read_bytes()
    assert d[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat = 8, b""
    while i < len(d):
        n, kind = struct.unpack(">I", d[i : i + 4])[0], d[i + 4 : i + 8]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", d[i + 8 : i + 18])
        elif kind == b"IDAT":
            idat += d[i + 8 : i + 8 + n]
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
    res = check(out, tmp_path, "h100", SINGLE + ["chart-roofline", "chart-memory"])
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
    text = out.read_text()
    assert "lake of 8 traces" in text
    gpus = _tags(text, "chart-gpu-timeline", "text", "lab")  # ranks known and distinct: named by rank
    assert sorted(gpus) == sorted(f"rank {r} · GPU {r}" for r in range(8)), gpus


def test_browser_check_sees_requests_and_errors(tmp_path):
    """The page's own check is live: a request the CSP blocks and a script error both show up."""
    import tracecols
    from tracecols.report import render

    html = render(tracecols.open(DATA_TRACE)).replace(
        "<main>", '<main><img src="https://example.invalid/x.png"><script>undefinedFn()</script>', 1
    )
    bad = tmp_path / "bad.html"
    bad.write_text(html)
    assert re.search(r"""src\s*=\s*["']?\s*(?:https?:)?//""", html)  # what check() refuses statically
    dom, _, _ = browse(bad, tmp_path, "bad", shot=False)
    res = json.loads(re.search(r'<div id="tc-check">([^<]*)</div>', dom).group(1).replace("&quot;", '"'))
    assert any("undefinedFn" in e for e in res["errors"])
    assert any(e.startswith("blocked https://example.invalid") for e in res["errors"])


# Injected by the tests (not part of the report): where the browser laid out each chart's SVG,
# its plot area, every text (its drawn characters: a label's <title> tooltip is not drawn) and
# every data mark, in page pixels.
MEASURE = r"""<script>(function(){
function box(e){var r=e.getBoundingClientRect();return [r.left,r.top,r.right,r.bottom];}
var out=[];
document.querySelectorAll('figure.chart').forEach(function(f){
  var svg=f.querySelector('svg'),plot=svg.querySelector('rect.plot'),texts=[],marks=[];
  svg.querySelectorAll('text').forEach(function(t){var s='';
    t.childNodes.forEach(function(c){if(c.nodeType===3)s+=c.nodeValue;});texts.push([s].concat(box(t)));});
  svg.querySelectorAll('.mark').forEach(function(m){marks.push([m.tagName].concat(box(m)));});
  out.push({id:f.id,svg:box(svg),plot:plot?box(plot):null,texts:texts,marks:marks});});
var d=document.createElement('pre');d.id='tc-measure';d.textContent=JSON.stringify(out);document.body.appendChild(d);
})();</script>"""


def measure(html, tmp_path, width):
    """Every chart of the report as the browser drew it in a window `width` px wide."""
    page = tmp_path / f"{html.stem}-{width}.html"
    page.write_text(html.read_text().replace("</body>", MEASURE + "</body>", 1))
    dom = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / ('profile-m' + str(width))}",
            f"--window-size={width},3000",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    m = re.search(r'<pre id="tc-measure">([^<]*)</pre>', dom.stdout)
    assert m, dom.stderr[-2000:]
    return json.loads(html_lib.unescape(m.group(1)))


def outside(inner, outer, tol):
    """How far the box `inner` reaches past `outer` on its worst side (<= tol: inside)."""
    return max(outer[0] - inner[0], inner[2] - outer[2], outer[1] - inner[1], inner[3] - outer[3]) - tol


def assert_charts_fit(charts):
    assert charts
    for c in charts:
        assert c["texts"], c["id"]
        for text, *b in c["texts"]:
            assert text.strip(), c["id"]
            assert outside(b, c["svg"], 0.5) <= 0, f"{c['id']}: {text!r} at {b} is cut by the SVG {c['svg']}"
        area = c["plot"] or c["svg"]
        for tag, *b in c["marks"]:
            if tag == "circle":  # a dot is at its centre; its radius may overhang the edge
                b = [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2] * 2
            assert outside(b, area, 1.0) <= 0, f"{c['id']}: a {tag} at {b} leaves the plot {area}"


def _lake(tmp_path, name, paths):
    lake = tmp_path / f"{name}.lake"
    run("ingest", *paths, "-o", lake, "-j", "1")
    return lake


def _tags(text, cid, tag, cls):
    """The drawn text of every <tag class=cls> in the figure `cid` (tooltips left out)."""
    fig = re.search(rf'<figure class="chart" id="{cid}">(.*?)</figure>', text, re.S).group(1)
    return [
        html_lib.unescape(re.sub(r"<title>.*?</title>|<[^>]+>", "", m))
        for m in re.findall(rf'<{tag} class="{cls}"[^>]*>(.*?)</{tag}>', fig, re.S)
    ]


@pytest.mark.corpus
@pytest.mark.parametrize("case", ["h100", "inference", "two-rank lake"])
def test_every_label_and_mark_stays_inside_its_chart(tmp_path, case):
    """Long kernel names, tick labels and axis titles are never cut by the SVG's edge, and no
    bar, dot or line leaves its plot (the axes reach past the data), at 1400 and 800 px."""
    source = {
        "h100": DATA_TRACE,
        "inference": SGLANG,
        "two-rank lake": lambda: _lake(tmp_path, "two", sorted(DLRM.glob("worker[01]_*.json"))),
    }[case]
    out = tmp_path / "report.html"
    run("report", source() if callable(source) else source, "-o", out)
    text = out.read_text()
    labels = _tags(text, "chart-top-kernels", "text", "lab")
    assert max(map(len, labels)) >= 40  # long kernel names are in the test, cut to fit
    for width in WIDTHS:
        charts = measure(out, tmp_path, width)
        assert {"chart-top-kernels", "chart-queue-depth", "chart-idle-gaps"} <= {c["id"] for c in charts}
        assert_charts_fit(charts)


def _deepest_queue(trace):
    """The most device events launched and not yet started on one stream, counted by walking
    `kernels` in time order: +1 at a launch call, -1 at the event's start (a start first when
    both happen at the same ns)."""
    rows = trace.sql("""select trace_id, device, stream, launch_ts_ns, ts_ns from kernels
                        where launch_uid is not null and ts_ns is not null""").rows()
    changes = {}
    for tid, dev, stream, launch, start in rows:
        changes.setdefault((tid, dev, stream), []).extend([(launch, 1), (start, -1)])
    deepest = {}
    for key, ch in changes.items():
        depth = best = 0
        for _, delta in sorted(ch, key=lambda c: (c[0], c[1])):
            depth += delta
            best = max(best, depth)
        deepest[key] = best
    return deepest


def _axis_ticks(text, cid, anchor):
    """Tick values along one axis of a chart (`end`: the y axis, `middle`: the x axis)."""
    fig = re.search(rf'<figure class="chart" id="{cid}">(.*?)</figure>', text, re.S).group(1)
    return [float(v.replace(",", "")) for v in re.findall(rf'<text class="tick"[^>]*text-anchor="{anchor}">([^<]+)</text>', fig)]


@pytest.mark.corpus
def test_queue_depth_axis_reaches_the_deepest_queue(tmp_path):
    """SGLang decode: one stream queues 544 launches, not a round number; the y axis must end
    at a tick at or above it (it used to stop at 400 and the line ran off the top)."""
    import tracecols

    trace = tracecols.open(str(SGLANG))
    deepest = _deepest_queue(trace)
    assert len(deepest) <= 6  # every stream is drawn (the chart shows the 6 busiest)
    top = max(deepest.values())
    assert top == 544
    out = tmp_path / "sglang.html"
    run("report", SGLANG, "-o", out)
    text = out.read_text()
    ticks = _axis_ticks(text, "chart-queue-depth", "end")
    assert max(ticks) >= top and max(ticks) < 2 * top and min(ticks) == 0, ticks
    # the time axis reaches the end of the trace's device work too (it used to stop short of it)
    span_ms = trace.sql("""select (max(end_ns) - min(least(ts_ns, coalesce(launch_ts_ns, ts_ns)))) / 1e6
                           from kernels""").item()
    assert "first kernel launch or device event (ms)" in text
    assert max(_axis_ticks(text, "chart-queue-depth", "middle")) >= span_ms


def test_nice_ticks_cover_the_range():
    from tracecols.report.charts import log_ticks, nice_ticks

    rng = np.random.default_rng(7)
    cases = [(0, 434), (0, 400), (0, 544), (0, 100), (-0.0098, 3.9), (0, 1e-7), (3, 3)]
    cases += [tuple(sorted(rng.uniform(-1e4, 1e4, 2))) for _ in range(300)]
    cases += [(0, float(x)) for x in 10 ** rng.uniform(-6, 9, 300)]
    for lo, hi in cases:
        t = nice_ticks(lo, hi)
        assert t[0] <= lo and t[-1] >= hi and 2 <= len(t) <= 12, (lo, hi, t)
        steps = {round(b - a, 9) for a, b in zip(t, t[1:])}
        assert len(steps) == 1, (lo, hi, t)
    for lo, hi in [(1e-6, 465.6), (0.1, 1000), (1000, 1000.0000001), (3.2, 3.3)]:
        t = log_ticks(lo, hi)
        assert t[0] <= lo and t[-1] >= hi, (lo, hi, t)


@pytest.mark.corpus
def test_lake_labels_each_trace_distinctly(tmp_path):
    """Five traces that all say rank 0 (two of them with the same file name) are told apart by
    their file names: each GPU's row and bar names its trace."""
    out = tmp_path / "rank0.html"
    run("report", _lake(tmp_path, "rank0", RANK0), "-o", out)
    text = out.read_text()
    rows = [
        html_lib.unescape(r)
        for r in re.findall(r'<table class="sortable" id="table-gpu-timeline">.*?<tbody>(.*?)</tbody>', text, re.S)[0].split(
            "<tr>"
        )
        if r
    ]
    scopes = [re.search(r'<td class="name" title="([^"]*)"', r).group(1) for r in rows]
    assert len(scopes) == len(RANK0) and len(set(scopes)) == len(scopes), scopes
    bars = _tags(text, "chart-gpu-timeline", "text", "lab")
    assert len(set(bars)) == len(bars) == len(RANK0), bars
    # each trace's GPU is named after its file, with its folder where two files share a name
    assert sorted(scopes) == sorted(
        f"{name} · GPU 0"
        for name in (
            "benchmark_result_2869224_1695835535_trace",
            "cuda_event_sync/event_sync_trace",
            "cuda_event_sync_multi_stream/event_sync_trace",
            "trace",
            "benchmark_simple_add_trace",
        )
    )
    assert "carry the same rank" in text  # the per-rank figures say they cannot tell these apart
    assert_charts_fit(measure(out, tmp_path, 800))


@pytest.mark.corpus
def test_warnings_are_shown_with_their_counts(tmp_path):
    """Each line of traces.warnings (read here from the table itself) is in the report, at the
    top, with its count (thousands separated): for one trace, and per trace in a lake."""
    import tracecols

    # one stream of 1,500 kernels, each running past the next one's start: 1,500 overlaps
    events = [
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": 1,
            "tid": 1,
            "ts": 10 * i,
            "dur": 2,
            "args": {"correlation": i},
        }
        for i in range(1, 1502)
    ]
    events += [
        {
            "ph": "X",
            "cat": "kernel",
            "name": f"k{i % 3}",
            "pid": 0,
            "tid": 7,
            "ts": 100 + 10 * i,
            "dur": 15,
            "args": {"correlation": i, "device": 0, "stream": 7},
        }
        for i in range(1, 1502)
    ]
    synthetic = tmp_path / "overlaps.json"
    synthetic.write_text(json.dumps({"traceEvents": events}))

    def expected(path, label=""):
        lines = tracecols.open(str(path)).sql("select warnings from traces").item().to_list()
        assert lines
        out = []
        for w in lines:
            n, rest = re.match(r"(\d+)(.*)", w, re.S).groups()
            out.append(f"{label}{int(n):,}{rest}")
        return out

    def shown(html):
        box = re.search(r'<div class="warn" id="warnings">(.*?)</div>', html, re.S)
        assert box, "no warnings in the report"
        assert html.index('id="warnings"') < html.index('id="chart-')  # above every chart
        return [html_lib.unescape(re.sub(r"<[^>]+>", "", li)) for li in re.findall(r"<li>(.*?)</li>", box.group(1))]

    one = expected(synthetic)
    assert one[0].startswith("1,500 device event(s) overlap")
    out = tmp_path / "one.html"
    run("report", synthetic, "-o", out)
    assert shown(out.read_text()) == one

    both = expected(MTIA, "mtia_inference_rank_0: ") + expected(synthetic, "overlaps: ")
    out = tmp_path / "lake.html"
    run("report", _lake(tmp_path, "warned", [MTIA, synthetic]), "-o", out)
    assert sorted(shown(out.read_text())) == sorted(both)
    assert any(w.startswith("mtia_inference_rank_0: 62 launch event(s) repeat a correlation id") for w in both)


def test_kernel_names_shorten_and_labels_cut_to_width():
    from tracecols.report.labels import fit, kernel_label, text_px, trace_labels

    assert (
        kernel_label(
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
            "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
            "std::array<char*, 3ul>)"
        )
        == "vectorized_elementwise_kernel<4, CUDAFunctor_add<BFloat16>, array<char*, 3ul> >"
    )
    assert (
        kernel_label(
            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>"
            "(int, float, c10::BFloat16 const*)"
        )
        == "vectorized_layer_norm_kernel<BFloat16, float>"
    )
    assert (
        kernel_label("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)")
        == "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"
    )
    assert kernel_label("Memcpy DtoH (Device -> Pinned)") == "Memcpy DtoH (Device -> Pinned)"  # not an argument list
    name = "autograd::engine::evaluate_function: torch::autograd::CppNode<SplitLookupFunction_sgd_Op>"
    for where in ("middle", "end"):
        cut = fit(name, 200, where=where)
        assert text_px(cut) <= 200 and "…" in cut and cut.replace("…", "") != name
    assert fit(name, 200).startswith("autograd::") and fit(name, 200).endswith("_Op>")
    assert fit(name, 200, where="end").startswith("autograd::engine::")
    assert fit("aten::mm", 200) == "aten::mm"
    rows = [(0, "/r/a/rank0.json", 0), (1, "/r/b/rank1.json", 1)]
    assert trace_labels(rows, lake=True) == {0: "rank 0", 1: "rank 1"}
    assert trace_labels(rows + [(2, "/r/c/rank1.json", 1)], lake=True) == {0: "rank0", 1: "b/rank1", 2: "c/rank1"}
    assert trace_labels([(0, "/r/x.pt.trace.json.gz", None)], lake=False) == {0: ""}
