"""Wheel build hook: compile the native reader (rust/) with maturin and ship it as tracecols/_native.

Without a Rust toolchain the wheel is built without it (the Python reader reads every trace, and
says so once); TRACECOLS_BUILD_NATIVE=required makes that an error instead, as CI sets it.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

NAME = "_native.abi3.so"


def _maturin():
    """The maturin executable: on PATH, else beside the maturin package pip installed for the
    build (its isolated environment's scripts are not always on PATH)."""
    found = shutil.which("maturin")
    if found:
        return found
    import maturin

    for parent in Path(maturin.__file__).resolve().parents:
        for scripts in ("bin", "Scripts"):
            exe = parent / scripts / ("maturin.exe" if os.name == "nt" else "maturin")
            if exe.is_file():
                return str(exe)
    raise OSError("maturin is installed but its executable was not found")


class NativeReader(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        required = os.environ.get("TRACECOLS_BUILD_NATIVE", "") == "required"
        try:
            lib = self._compile(root)
        except (OSError, subprocess.CalledProcessError) as e:
            if required:
                raise
            print(f"tracecols: the native reader was not built ({e}); the Python reader will read traces", file=sys.stderr)
            return
        if version == "editable":  # the package is imported from the checkout: the library goes there
            shutil.copyfile(lib, root / "tracecols" / NAME)
        else:
            build_data["force_include"][str(lib)] = f"tracecols/{NAME}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def _compile(self, root):
        out = Path(tempfile.mkdtemp(prefix="tracecols-native-"))
        cmd = [_maturin(), "build", "--release", "--quiet", "-m", str(root / "rust" / "Cargo.toml")]
        subprocess.run([*cmd, "-i", sys.executable, "--out", str(out)], check=True, cwd=root)
        [wheel] = out.glob("*.whl")
        with zipfile.ZipFile(wheel) as z:
            [member] = [m for m in z.namelist() if m.endswith(".so") or m.endswith(".pyd")]
            lib = out / NAME
            lib.write_bytes(z.read(member))
        return lib
