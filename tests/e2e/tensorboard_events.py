#!/usr/bin/env python3
"""Every run in TensorBoard (issue 51), checked with a decoder of its own, not attnlab's code.

Trains small runs with `attnlab train` (a dot model and a Connection Transformer), then reads
their event files here in pure Python: the record framing (u64 length, masked CRC32C of it, the
data, masked CRC32C of the data, each CRC computed bitwise here) and the protobuf Events decoded
field by field. Every scalar must equal metrics.csv (tags by docs/guide/runs.md's table, steps,
values as float32), the head metrics `attnlab export --figure heads --format csv` prints, and the
config text config.json. Then: a resumed run writes a new file and leaves the old one alone;
`attnlab export --run DIR --tensorboard` writes the same scalars for a run without a file, and
refuses (exit 2, the culprit named, nothing changed) a missing run, a damaged metrics.csv and a
run that has an event file already.

usage: tensorboard_events.py <attnlab binary>
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1])
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


# --- an independent reader ------------------------------------------------------------------

def crc32c_bitwise(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    """The data of every record; raises on a bad length or CRC."""
    raw = open(path, "rb").read()
    out, at = [], 0
    while at < len(raw):
        if at + 12 > len(raw):
            raise ValueError("%s: torn header at byte %d" % (path, at))
        header = raw[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", raw[at + 8:at + 12])
        if masked(crc32c_bitwise(header)) != length_crc:
            raise ValueError("%s: length CRC wrong at byte %d" % (path, at))
        data = raw[at + 12:at + 12 + length]
        if len(data) != length or at + 16 + length > len(raw):
            raise ValueError("%s: torn record at byte %d" % (path, at))
        (data_crc,) = struct.unpack("<I", raw[at + 12 + length:at + 16 + length])
        if masked(crc32c_bitwise(data)) != data_crc:
            raise ValueError("%s: data CRC wrong at byte %d" % (path, at))
        out.append(data)
        at += 16 + length
    return out


def fields(buf):
    """Protobuf wire format: a list of (field number, value); bytes for wire type 2, the raw
    little-endian bytes for fixed32/fixed64, ints for varints."""
    out, at = [], 0

    def varint():
        nonlocal at
        shift = value = 0
        while True:
            b = buf[at]
            at += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value

    while at < len(buf):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            out.append((number, varint()))
        elif wire == 1:
            out.append((number, buf[at:at + 8]))
            at += 8
        elif wire == 5:
            out.append((number, buf[at:at + 4]))
            at += 4
        elif wire == 2:
            n = varint()
            out.append((number, buf[at:at + n]))
            at += n
        else:
            raise ValueError("wire type %d" % wire)
    return out


def decode_event(data):
    """Event -> dict: wall_time, step, file_version, values [(tag, kind, value)]."""
    event = {"step": 0, "values": []}
    for number, value in fields(data):
        if number == 1:
            event["wall_time"] = struct.unpack("<d", value)[0]
        elif number == 2:
            event["step"] = value
        elif number == 3:
            event["file_version"] = value.decode()
        elif number == 5:
            for n, v in fields(value):
                if n == 1:
                    event["values"].append(decode_value(v))
    return event


def decode_value(buf):
    tag, kind, value, plugin = None, None, None, None
    for number, v in fields(buf):
        if number == 1:
            tag = v.decode()
        elif number == 2:
            kind, value = "scalar", struct.unpack("<f", v)[0]
        elif number == 8:  # TensorProto
            tensor = dict((n, x) for n, x in fields(v) if n != 8)
            strings = [x for n, x in fields(v) if n == 8]
            if tensor.get(1) == 7 and len(strings) == 1:  # DT_STRING, one string
                kind, value = "text", strings[0].decode()
        elif number == 9:  # SummaryMetadata{plugin_data=1 {plugin_name=1}}
            for n, pd in fields(v):
                if n == 1:
                    plugin = dict(fields(pd)).get(1, b"").decode()
    if kind == "text" and plugin != "text":
        kind = "text without the text plugin"
    return (tag, kind, value)


def read_events(path):
    events = [decode_event(r) for r in records(path)]
    scalars, texts = {}, {}
    for e in events[1:]:
        for tag, kind, value in e["values"]:
            target = scalars if kind == "scalar" else texts
            target.setdefault(tag, []).append((e["step"], value))
    return events, scalars, texts


# --- what the event files must hold ---------------------------------------------------------

COLUMN_TAGS = {"train_loss": "loss/train", "eval_loss": "loss/eval",
               "eval_accuracy": "accuracy/eval", "lr": "train/lr",
               "steps_per_s": "train/steps_per_s"}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def metrics_scalars(run):
    lines = open(os.path.join(run, "metrics.csv")).read().splitlines()
    header = lines[0].split(",")
    expected = {}
    for line in lines[1:]:
        cells = line.split(",")
        for column, cell in zip(header[1:], cells[1:]):
            if cell:
                tag = COLUMN_TAGS.get(column, "metrics/" + column)
                expected.setdefault(tag, []).append((int(cells[0]), f32(float(cell))))
    return expected


def heads_scalars(run, work):
    out = os.path.join(work, "heads-%d.csv" % len(os.listdir(work)))
    subprocess.run([BIN, "export", "--run", run, "--figure", "heads", "--format", "csv",
                    "--out", out], check=True, capture_output=True)
    expected = {}
    lines = open(out).read().splitlines()
    for line in lines[1:]:
        step, layer, head, metric, value = line.split(",")
        if not value or not math.isfinite(float(value)):
            continue
        tag = ("model/" + metric if not layer else
               "heads_%s/layer%s/head%s" % (metric, layer, head))
        expected.setdefault(tag, []).append((int(step), float(value)))
    return expected


def same_series(got, want):
    if [s for s, _ in got] != [s for s, _ in want]:
        return False
    return all(math.isclose(g, w, rel_tol=2e-7, abs_tol=1e-12) or (math.isnan(g) and math.isnan(w))
               for (_, g), (_, w) in zip(got, want))


def event_files(run):
    return sorted(f for f in os.listdir(run) if f.startswith("events.out.tfevents."))


def check_run_file(run, work, label, path=None):
    """The run's one event file against metrics.csv, the head metrics and config.json."""
    files = event_files(run)
    if path is None:
        check(len(files) == 1, "%s: one event file (%s)" % (label, files))
        path = os.path.join(run, files[-1])
    events, scalars, texts = read_events(path)
    check(events[0].get("file_version") == "brain.Event:2", label + ": file_version first")
    metric_tags = {t: v for t, v in scalars.items() if not t.startswith(("heads_", "model/"))}
    want = metrics_scalars(run)
    check(metric_tags == want,
          "%s: every metrics.csv scalar, tags, steps and float32 values (%d tags, %d points)" %
          (label, len(want), sum(len(v) for v in want.values())))
    if metric_tags != want:
        print("  got ", sorted(metric_tags.items())[:3], "\n  want", sorted(want.items())[:3])
    heads = heads_scalars(run, work)
    got_heads = {t: v for t, v in scalars.items() if t.startswith(("heads_", "model/"))}
    ok = set(got_heads) == set(heads) and all(same_series(got_heads[t], heads[t]) for t in heads)
    check(ok and heads, "%s: every head metric of views.rec at its step (%d tags)" %
          (label, len(heads)))
    config = open(os.path.join(run, "config.json")).read().rstrip("\n")
    check(texts.get("config") == [(0, "```json\n" + config + "\n```")],
          label + ": the config as text at step 0")
    return scalars


def expect_refusal(args, culprit, run, label):
    before = snapshot(run)
    p = subprocess.run([BIN] + args, capture_output=True, text=True)
    check(p.returncode == 2 and culprit in p.stderr,
          "%s: exit 2 naming %s (rc %d: %s)" % (label, culprit, p.returncode, p.stderr.strip()))
    check(snapshot(run) == before, label + ": nothing changed")


def snapshot(run):
    if not os.path.isdir(run):
        return None
    return {f: open(os.path.join(run, f), "rb").read() for f in sorted(os.listdir(run))
            if os.path.isfile(os.path.join(run, f))}


def train(work, name, config, *extra):
    path = os.path.join(work, name + ".json")
    json.dump(config, open(path, "w"))
    run = os.path.join(work, name)
    p = subprocess.run([BIN, "train", "--config", path, "--out", run, "--threads", "1",
                        "--quiet"] + list(extra), capture_output=True, text=True)
    check(p.returncode == 0, "train %s (%s)" % (name, p.stderr.strip()[-300:]))
    return run


def main():
    work = tempfile.mkdtemp(prefix="attnlab-tb-")
    try:
        dot = train(work, "dot", {
            "name": "dot", "seed": 1, "task": {"name": "copy", "length": 6, "vocab": 10},
            "model": {"d_model": 16, "heads": 2, "layers": 2, "attention": "dot"},
            "train": {"steps": 60, "batch_size": 8, "warmup": 5, "eval_every": 20,
                      "eval_batches": 1}})
        check_run_file(dot, work, "dot")
        conn = train(work, "conn", {
            "name": "conn", "seed": 1, "task": {"name": "recall", "length": 4, "vocab": 8},
            "model": {"architecture": "conn", "d_model": 16, "heads": 1,
                      "conn": {"slots": 8, "steps": 2}},
            "train": {"steps": 40, "batch_size": 8, "warmup": 5, "eval_every": 20,
                      "eval_batches": 1}})
        scalars = check_run_file(conn, work, "conn")
        check(len(scalars.get("model/spectral_radius", [])) >= 2,
              "conn: rho(I + C) as model/spectral_radius at each recorded step")

        # The reader is no rubber stamp: one flipped bit in either part of a record is caught.
        raw = open(os.path.join(dot, event_files(dot)[0]), "rb").read()
        for at, part in ((3, "length"), (20, "data")):
            bad_copy = os.path.join(work, "flipped")
            open(bad_copy, "wb").write(raw[:at] + bytes([raw[at] ^ 1]) + raw[at + 1:])
            try:
                records(bad_copy)
                check(False, "a flipped bit in the %s is caught" % part)
            except ValueError as e:
                check(part in str(e) or "torn" in str(e),
                      "a flipped bit in the %s is caught (%s)" % (part, e))

        # A resume appends to a new file; the old one stays byte for byte.
        first = event_files(dot)[0]
        old = open(os.path.join(dot, first), "rb").read()
        p = subprocess.run([BIN, "train", "--resume", dot, "--out", dot, "--steps", "100",
                            "--threads", "1", "--quiet"], capture_output=True, text=True)
        check(p.returncode == 0, "resume dot to 100 steps (%s)" % p.stderr.strip()[-300:])
        files = event_files(dot)
        check(len(files) == 2 and first in files, "resume: a second event file (%s)" % files)
        check(open(os.path.join(dot, first), "rb").read() == old, "resume: the first file as it was")
        newer = [f for f in files if f != first]
        if newer:
            _, scalars, _ = read_events(os.path.join(dot, newer[0]))
            metric_tags = {t: v for t, v in scalars.items() if not t.startswith(("heads_", "model/"))}
            check(metric_tags == metrics_scalars(dot),
                  "resume: the new file holds every metrics.csv row, the kept ones too")

        # train --force over a run: the replaced run's event files (attnlab's, by name) go with
        # it, so TensorBoard shows the new run alone; another writer's event file stays.
        forced = train(work, "forced", {
            "name": "forced", "seed": 1, "task": {"name": "copy", "length": 6, "vocab": 10},
            "model": {"d_model": 16, "heads": 2, "layers": 1, "attention": "dot"},
            "train": {"steps": 40, "batch_size": 8, "warmup": 5, "eval_every": 20,
                      "eval_batches": 1}})
        subprocess.run([BIN, "train", "--resume", forced, "--out", forced, "--steps", "60",
                        "--threads", "1", "--quiet"], capture_output=True, text=True)
        check(len(event_files(forced)) == 2, "forced: two event files before --force (%s)" %
              event_files(forced))
        theirs = "events.out.tfevents.1700000000.elsewhere.42"
        open(os.path.join(forced, theirs), "wb").write(b"another writer's")
        p = subprocess.run([BIN, "train", "--config", os.path.join(work, "forced.json"), "--out",
                            forced, "--force", "--seed", "2", "--threads", "1", "--quiet"],
                           capture_output=True, text=True)
        check(p.returncode == 0, "train --force over the run (%s)" % p.stderr.strip()[-300:])
        mine = [f for f in event_files(forced) if f != theirs]
        check(len(mine) == 1, "train --force: the new run's event file alone (%s)" % mine)
        check(open(os.path.join(forced, theirs), "rb").read() == b"another writer's",
              "train --force: another writer's event file stays as it was")
        if len(mine) == 1:
            check_run_file(forced, work, "forced", os.path.join(forced, mine[0]))

        # export --tensorboard: an older run (no event file) gets one, equal to the live one.
        old_run = os.path.join(work, "old")
        shutil.copytree(dot, old_run)
        for f in event_files(old_run):
            os.remove(os.path.join(old_run, f))
        p = subprocess.run([BIN, "export", "--run", old_run, "--tensorboard"],
                           capture_output=True, text=True)
        check(p.returncode == 0 and "events.out.tfevents." in p.stdout,
              "export --tensorboard writes a file and prints it (%s)" % p.stderr.strip())
        check_run_file(old_run, work, "export")

        # Refusals: exit 2, the culprit named, nothing written.
        expect_refusal(["export", "--run", old_run, "--tensorboard"], "events.out.tfevents.",
                       old_run, "a run with an event file already")
        missing = os.path.join(work, "missing")
        expect_refusal(["export", "--run", missing, "--tensorboard"], missing, missing,
                       "a missing run")
        damaged = os.path.join(work, "damaged")
        shutil.copytree(old_run, damaged)
        for f in event_files(damaged):
            os.remove(os.path.join(damaged, f))
        with open(os.path.join(damaged, "metrics.csv"), "a") as m:
            m.write("120,abc,1,1,1,1\n")
        expect_refusal(["export", "--run", damaged, "--tensorboard"], "metrics.csv", damaged,
                       "a damaged metrics.csv")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("tensorboard_events: %d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
