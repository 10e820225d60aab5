"""What the package's plain-python tests in this folder share (test_loader_hardening.py,
test_checkpoints_cache.py): a safetensors writer of their own (independent of the package's
reader), attnlab.load in a process capped at 3 GiB of address space, and the runner that calls
each test_* function in a fresh temporary directory.

Its name does not start with test_: the runners call every global whose name does.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The package under test (the tests put it first on sys.path before importing attnlab).
PACKAGE_DIR = os.environ.get("ATTNLAB_PYTHON_DIR", os.path.join(REPO, "python"))

# Asking for a claimed size (tens of GB) fails under this cap instead of filling the machine.
CAPPED = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
sys.path.insert(0, PACKAGE)
import attnlab
try:
    attnlab.load(*ARGS, **KWARGS)
    out = ["loaded", "", False]
except Exception as e:
    own = getattr(attnlab, "AttnlabError", None)
    out = [type(e).__name__, str(e), own is not None and isinstance(e, own)]
out.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
print(json.dumps(out))
"""


def load_capped(package_dir, *args, **kwargs):
    """attnlab.load(*args, **kwargs) (the package in package_dir) in a process capped at 3 GiB
    of address space: [error type, message, attnlab's error?, peak RSS kB]; fails when that
    process dies instead of answering."""
    code = CAPPED.replace("PACKAGE", repr(package_dir)).replace("KWARGS", repr(kwargs)) \
        .replace("ARGS", repr(list(args)))  # KWARGS first: it holds "ARGS"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and p.stdout.strip(), \
        f"the capped load died (exit {p.returncode}): {p.stderr.strip()[-800:]}"
    return json.loads(p.stdout.strip().splitlines()[-1])


def st_bytes(entries, metadata=None, header_extra=None):
    """A safetensors file from [(name, dtype, shape, data bytes, offsets or None)]: offsets None
    means packed in order. header_extra: raw header entries to add as they are."""
    header, blobs, pos = {}, [], 0
    for name, dtype, shape, data, offsets in entries:
        if offsets is None:
            offsets = [pos, pos + len(data)]
            pos += len(data)
            blobs.append(data)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}
    header.update(header_extra or {})
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def run_tests(namespace, prefix, traceback_lines):
    """Calls each test_<name>(work) of `namespace` (a module's globals()) whose name holds the
    -k argument, each in a fresh temporary directory (prefix) removed after it; prints ok or
    FAILED with the traceback's last lines, then the counts; exits 1 when any failed."""
    only = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else ""
    tests = [(n, f) for n, f in namespace.items() if n.startswith("test_") and only in n]
    passed = failed = 0
    for name, fn in tests:
        work = tempfile.mkdtemp(prefix=prefix)
        try:
            fn(work)
            passed += 1
            print(f"ok      {name}")
        except Exception:  # noqa: BLE001 (reported per test)
            failed += 1
            print(f"FAILED  {name}\n" + "".join(
                "    " + line
                for line in traceback.format_exc().splitlines(True)[-traceback_lines:]))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
