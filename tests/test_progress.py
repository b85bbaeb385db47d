"""The progress line: what it says, that it shows on a terminal after a while, and that it
stays silent with -q or when stderr is not a terminal."""

import os
import pty
import select
import subprocess
import sys

from conftest import CORPUS

from tracecols import progress

BIG = CORPUS / "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz"


def test_line_reads_stage_bytes_events_and_eta():
    line = progress.Line(stream=None)
    line.stage("reading t.json", total_bytes=400_000_000, scale=2)
    line.read(50_000_000)  # this process read the first of two equal parts: 100 of 400 MB
    line.events(300_000)
    text = line.text(now=line.stage_t0 + 10)
    assert text.startswith("tracecols: reading t.json 100.0/400.0 MB · 600k events · 60k events/s · ETA 30 s")
    line.stage("analyses", total_items=40)
    for _ in range(10):
        line.item()
    assert "analyses 10/40 · ETA 1 min 00 s" in line.text(now=line.stage_t0 + 20)


def test_line_escapes_the_file_name():
    line = progress.Line(stream=None)
    line.stage("reading a\x1b[2J\r.json", total_bytes=100)
    assert line.text().startswith("tracecols: reading a\\x1b[2J\\r.json 0.0/0.0 MB")


def _stderr_of(args, tty):
    """The command's stderr, through a pseudo-terminal when `tty` (progress shown at once)."""
    code = (
        "import sys; from tracecols import progress; progress.SHOW_AFTER = 0; progress.REFRESH = 0.02; "
        "from tracecols.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    if not tty:
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                b = os.read(master, 1 << 16)
            except OSError:  # the other end closed
                break
            if not b:
                break
            out += b
        elif p.poll() is not None:
            break
    os.close(master)
    assert p.wait() == 0
    return out.decode()


def test_progress_on_a_terminal_and_silence_elsewhere(tmp_path):
    shown = _stderr_of(["analyze", str(BIG), "-o", str(tmp_path / "a")], tty=True)
    assert "tracecols: reading df_index_resolver.json.gz" in shown and " MB" in shown
    assert "tracecols: analyses " in shown
    assert shown.rstrip("\r\n").endswith("s)") or "\r\x1b[K" in shown  # the line is erased when done
    quiet = _stderr_of(["analyze", "-q", str(BIG), "-o", str(tmp_path / "b")], tty=True)
    assert "reading" not in quiet and "analyses" not in quiet
    piped = _stderr_of(["analyze", str(BIG), "-o", str(tmp_path / "c")], tty=False)
    assert "reading" not in piped and "\x1b" not in piped


def test_ingest_bar_advances_by_bytes_read_here_and_files_done():
    import io

    from tracecols.cli.fleet import ProgressReporter

    rep = ProgressReporter(stream=io.StringIO(), force=True)
    rep.start(n_files=2, n_bytes=1000)
    with progress.using(rep):
        progress.tracker().read(300)  # a file read in this process, as it is read
        progress.tracker().events(5)
    task = rep.progress.tasks[0]
    assert task.completed == 300
    rep.done({"size": 400, "n_events": 5})  # only what was not counted yet
    assert task.completed == 400 and "1/2 files" in task.fields["rate"]
    rep.done({"size": 600, "n_events": 1})  # a file a worker read elsewhere
    assert task.completed == 1000 and "2/2 files" in task.fields["rate"]
    rep.finish()
